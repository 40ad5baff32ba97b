/**
 * The machinery of the kinds whose values are stored as doubles and ordered by value (`number`,
 * `date`, `datetime`, `enum`, `boolean`; kind.ts): the store keeps each row's rank (0 = null),
 * the rows by value (nulls first) and the distinct values, so that a range is two binary searches
 * and a slice of the permutation, and a text or set test is decided once per distinct value and
 * applied to that value's slice of rows. No operator scans the rows.
 */
import { type Bitmap, emptyBitmap } from "../bits/bitmap.ts";
import { fold } from "../collation/collation.ts";
import type { ConvertedColumn } from "./convert.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import { type ByteColumn, appendString, finishByteColumn, growingByteColumn } from "../bits/byte-column.ts";
import { firstAtLeast, orderDoubles } from "./ordered-column.ts";
import type { ColumnTest, GetFilter, KindModule, StoredColumn, StoredPart, TextOp } from "./kind.ts";

/** The parts an ordered column sets. */
export const ORDERED_PARTS: readonly StoredPart[] = ["rankByRow", "rowsByValue", "rankStarts", "distinct"];

/** What distinguishes one ordered kind from another: how its stored values read and write. */
export interface OrderedValues {
  /** Each row's stored value in input order, NaN for null; length n. */
  storedValues(converted: ConvertedColumn): Float64Array;
  /** The output string of a stored value (docs/api.md: what text filters compare). */
  format(spec: ColumnSpec, value: number): string;
  /** The JSON text of a stored value in a record. */
  json(spec: ColumnSpec, value: number): string;
  /**
   * The stored values whose folded output string is `folded` (a set filter's whole value),
   * found without formatting every distinct value; may return values the column lacks.
   */
  valuesOf(spec: ColumnSpec, folded: string): number[];
}

/** A stored column with every part null: what a kind fills in. */
export function emptyStoredColumn(spec: ColumnSpec): StoredColumn {
  return { spec, rankByRow: null, rowsByValue: null, rankStarts: null, distinct: null, folded: null, foldedOffsets: null, blank: null, trigrams: null };
}

/** Builds an ordered column: values gathered to store rows, then ordered (store/ordered-column.ts). */
export function buildOrdered(spec: ColumnSpec, values: Float64Array, order: Uint32Array | null): StoredColumn {
  let rowValues = values;
  if (order !== null) {
    rowValues = new Float64Array(order.length);
    for (let row = 0; row < order.length; row++) rowValues[row] = values[order[row]];
  }
  const ordered = orderDoubles(rowValues);
  return { ...emptyStoredColumn(spec), ...ordered };
}

/** Every row's JSON text of an ordered column, in input order (`null` for null); the text of each distinct value is made once. */
export function orderedLiterals(spec: ColumnSpec, values: Float64Array, json: (spec: ColumnSpec, value: number) => string): ByteColumn {
  const out = growingByteColumn(values.length, values.length * 8);
  const memo = new Map<number, string>();
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (Number.isNaN(x)) {
      appendString(out, "null");
      continue;
    }
    let text = memo.get(x);
    if (text === undefined) {
      text = json(spec, x);
      if (memo.size < 1 << 16) memo.set(x, text);
    }
    appendString(out, text);
  }
  return finishByteColumn(out);
}

/** Sets in `bits` the rows `perm[from .. to)`. */
function setSlice(bits: Bitmap, perm: Uint32Array, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const row = perm[i];
    bits[row >>> 5] |= 1 << (row & 31);
  }
}

/** Does folded `cell` pass a text operator against folded `needle` (the value is not null)? */
export function textPasses(type: TextOp, cell: string, needle: string): boolean {
  switch (type) {
    case "contains":
      return cell.includes(needle);
    case "notContains":
      return !cell.includes(needle);
    case "equals":
      return cell === needle;
    case "notEqual":
      return cell !== needle;
    case "startsWith":
      return cell.startsWith(needle);
    case "endsWith":
      return cell.endsWith(needle);
    case "blank":
      return cell.trim() === "";
    case "notBlank":
      return cell.trim() !== "";
  }
}

/** Does null pass a text operator? AG Grid: only `notEqual`, `notContains` and `blank` (docs/api.md "Filtering on any column"). */
export function nullPassesText(type: TextOp): boolean {
  return type === "notEqual" || type === "notContains" || type === "blank";
}

/** The ranks (1-based, ascending, distinct) of the stored values among `column.distinct`. */
function ranksOf(column: StoredColumn, values: number[]): number[] {
  const distinct = column.distinct as Float64Array;
  const ranks = new Set<number>();
  for (const x of values) {
    if (Number.isNaN(x)) continue;
    const i = firstAtLeast(distinct, x, false);
    if (i < distinct.length && distinct[i] === x) ranks.add(i + 1);
  }
  return [...ranks].sort((a, b) => a - b);
}

/**
 * Evaluates a column test on an ordered column.
 * Cost: a range or null test O(matching rows + log d); a set test O(values · log d + matching
 * rows); a text test O(d) value formats (one per distinct value) + O(matching rows).
 */
export function evaluateOrdered(values: OrderedValues, column: StoredColumn, test: ColumnTest, rowCount: number): Bitmap {
  const perm = column.rowsByValue as Uint32Array;
  const starts = column.rankStarts as Uint32Array;
  const distinct = column.distinct as Float64Array;
  const d = distinct.length;
  const bits = emptyBitmap(rowCount);
  switch (test.op) {
    case "null":
      if (test.negate) setSlice(bits, perm, starts[1], rowCount);
      else setSlice(bits, perm, 0, starts[1]);
      return bits;
    case "range": {
      const first = firstAtLeast(distinct, test.lo, test.loOpen);
      const last = Math.max(first, firstAtLeast(distinct, test.hi, !test.hiOpen));
      // ranks first+1 … last are in the range
      const from = starts[first + 1];
      const to = starts[last + 1];
      if (test.negate) {
        setSlice(bits, perm, starts[1], from);
        setSlice(bits, perm, to, rowCount);
      } else setSlice(bits, perm, from, to);
      return bits;
    }
    case "set": {
      if (test.nulls) setSlice(bits, perm, 0, starts[1]);
      const stored: number[] = [];
      for (const v of test.values) stored.push(...values.valuesOf(column.spec, v));
      for (const r of ranksOf(column, stored)) setSlice(bits, perm, starts[r], starts[r + 1]);
      return bits;
    }
    case "text": {
      const needle = fold(test.value);
      if (nullPassesText(test.type)) setSlice(bits, perm, 0, starts[1]);
      if (test.type === "equals" || test.type === "notEqual") {
        // one value (or all but one): found by parsing, not by formatting every value
        const ranks = ranksOf(column, values.valuesOf(column.spec, needle));
        if (test.type === "equals") {
          for (const r of ranks) setSlice(bits, perm, starts[r], starts[r + 1]);
        } else {
          let from = starts[1];
          for (const r of ranks) {
            setSlice(bits, perm, from, starts[r]);
            from = starts[r + 1];
          }
          setSlice(bits, perm, from, rowCount);
        }
        return bits;
      }
      for (let r = 1; r <= d; r++) {
        if (textPasses(test.type, fold(values.format(column.spec, distinct[r - 1])), needle)) setSlice(bits, perm, starts[r], starts[r + 1]);
      }
      return bits;
    }
  }
}

/**
 * The work {@link evaluateOrdered} does for `test`, in rows or values visited (planner.ts): a
 * range or null test's rows are counted exactly from the rank starts (two binary searches); a
 * set test's from its values' ranks; a text test visits every distinct value and, at worst, every row.
 */
export function orderedWork(column: StoredColumn, test: ColumnTest, rowCount: number): number {
  const distinct = column.distinct as Float64Array;
  const starts = column.rankStarts as Uint32Array;
  switch (test.op) {
    case "null":
      return test.negate ? rowCount - starts[1] : starts[1];
    case "range": {
      const first = firstAtLeast(distinct, test.lo, test.loOpen);
      const last = Math.max(first, firstAtLeast(distinct, test.hi, !test.hiOpen));
      const inside = starts[last + 1] - starts[first + 1];
      return test.negate ? rowCount - starts[1] - inside : inside;
    }
    case "set":
      return rowCount / 4;
    case "text":
      return test.type === "equals" || test.type === "notEqual" ? rowCount / 4 : distinct.length * 8 + rowCount;
  }
}

/**
 * One GET value of a range kind as the stored-value interval it covers: `[start, end]`, or
 * `[start, end)` when `endOpen` (a date-only value on a datetime column covers its whole UTC day).
 */
export interface GetBound {
  start: number;
  end: number;
  endOpen: boolean;
  /** The value as the normalized echo writes it. */
  echo: string;
}

/**
 * The GET form of a range kind (number, date, datetime; docs/api.md "Filtering on any column"):
 * `v` equals, `lo,hi` inclusive with either side empty, `,` alone no filter. `bound(text)` reads
 * one value as the interval it covers ({@link GetBound}) or a reason it is refused.
 */
export function rangeGetFilter(value: string, bound: (text: string) => GetBound | string): GetFilter | string | null {
  const parts = value.split(",");
  if (parts.length > 2) return `must be a value or a range "min,max" (got "${value}")`;
  const texts = parts.map((p) => p.trim());
  const bounds: (GetBound | null)[] = [];
  for (const text of texts) {
    if (text === "") {
      bounds.push(null);
      continue;
    }
    const b = bound(text);
    if (typeof b === "string") return b;
    bounds.push(b);
  }
  if (parts.length === 1) {
    const b = bounds[0];
    if (b === null) return `must be a value (got "${value}")`;
    return { tests: [{ op: "range", lo: b.start, loOpen: false, hi: b.end, hiOpen: b.endOpen, negate: false }], echo: b.echo };
  }
  const [lo, hi] = bounds;
  if (lo === null && hi === null) return null;
  return {
    tests: [
      {
        op: "range",
        lo: lo === null ? Number.NEGATIVE_INFINITY : lo.start,
        loOpen: false,
        hi: hi === null ? Number.POSITIVE_INFINITY : hi.end,
        hiOpen: hi !== null && hi.endOpen,
        negate: false,
      },
    ],
    echo: `${lo === null ? "" : lo.echo},${hi === null ? "" : hi.echo}`,
  };
}

/** An ordered kind's module from its {@link OrderedValues} and the rest of its description. */
export function orderedKind(
  kind: KindModule["kind"],
  values: OrderedValues,
  rest: Pick<KindModule, "convert" | "filterTypes" | "getFilter" | "getFormDoc" | "dayInterval" | "jsonSchema" | "setValue">,
): KindModule {
  return {
    kind,
    sortable: true,
    parts: ORDERED_PARTS,
    build: (spec, converted, order) => buildOrdered(spec, values.storedValues(converted), order),
    literals: (spec, converted) => orderedLiterals(spec, values.storedValues(converted), values.json),
    evaluate: (column, test, rowCount) => evaluateOrdered(values, column, test, rowCount),
    work: orderedWork,
    valueJson: values.json,
    ...rest,
  };
}
