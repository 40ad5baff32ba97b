/**
 * The machinery of the kinds whose values are stored as doubles and ordered by value (`number`,
 * `date`, `datetime`, `enum`, `boolean`; kind.ts): the store keeps each row's rank (0 = null),
 * the rows by value (nulls first) and the distinct values, so that a range is two binary searches
 * and a slice of the permutation, and a text or set test is decided once per distinct value and
 * applied to that value's slice of rows. No operator scans the rows.
 *
 * A number key keeps only its values (`distinct`, one per row, ascending): rows are numbered in
 * its order, so rank r's rows are the single row r - 1 and a range is a range of rows.
 */
import { type Bitmap, emptyBitmap, setRange } from "../bits/bitmap.ts";
import { PIECE, type Work, finish } from "../bits/work.ts";
import { fold } from "../collation/collation.ts";
import type { ConvertedColumn, DoublesLayout } from "./convert.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import { type ByteColumn, appendString, finishByteColumn, growingByteColumn } from "../bits/byte-column.ts";
import { firstAtLeast, orderDoubles, rowsByAbsoluteValue } from "./ordered-column.ts";
import { type BuildContext, type ColumnTest, type ColumnWriter, type GetFilter, type KeyRole, type KindModule, type StoredColumn, type StoredPart, type TextOp, type ValueTest, emptyStoredColumn } from "./kind.ts";

/** The parts an ordered column sets. */
export const ORDERED_PARTS: readonly StoredPart[] = ["rankByRow", "rowsByValue", "rankStarts", "distinct"];

/** The parts an ordered key sets: its values alone. */
export const ORDERED_KEY_PARTS: readonly StoredPart[] = ["distinct"];

/**
 * What distinguishes one ordered kind from another: its converted layout (convert.ts `DOUBLES` or
 * `CODES`), and how its stored values read and write.
 */
export interface OrderedValues extends DoublesLayout {
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

/** Each store row's value: `values` (input order) gathered by `order` (store row → input position). */
export function gatherDoubles(values: Float64Array, order: Uint32Array | null): Float64Array {
  if (order === null) return values;
  const out = new Float64Array(order.length);
  for (let row = 0; row < order.length; row++) out[row] = values[order[row]];
  return out;
}

/**
 * Builds an ordered column: values gathered to store rows, then ordered (ordered-column.ts), and
 * the rows by absolute value when a value is negative. A key keeps its values alone (ascending,
 * by construction of the row order).
 * @throws RangeError for a key whose values are not strictly ascending in row order (a duplicate)
 */
export function buildOrdered(spec: ColumnSpec, values: Float64Array, context: BuildContext): StoredColumn {
  const rowValues = gatherDoubles(values, context.order);
  let negative = false;
  for (let row = 0; row < rowValues.length; row++) {
    if (rowValues[row] < 0) {
      negative = true;
      break;
    }
  }
  const column = emptyStoredColumn(spec, context.key);
  if (context.key) {
    for (let row = 1; row < rowValues.length; row++) {
      if (!(rowValues[row - 1] < rowValues[row])) throw new RangeError(`key column "${spec.id}": duplicate key ${rowValues[row]}`);
    }
    // -0 and 0 are one key, written 0; the input's own array is not changed
    const keys = rowValues === values ? rowValues.slice() : rowValues;
    for (let row = 0; row < keys.length; row++) keys[row] += 0;
    column.distinct = keys;
  } else Object.assign(column, orderDoubles(rowValues));
  if (negative && spec.kind === "number") column.rowsByAbsValue = rowsByAbsoluteValue(rowValues);
  return column;
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

/** Does null pass a text operator? AG Grid: only `notEqual`, `notContains` and `blank` (docs/api.md "Filter model"). */
export function nullPassesText(type: TextOp): boolean {
  return type === "notEqual" || type === "notContains" || type === "blank";
}

/** Distinct values of an ordered column (d). */
function distinctCount(column: StoredColumn): number {
  return (column.distinct as Float64Array).length;
}

/** Where rank r's rows start in the column's order (rank 0 = null at 0; r ≤ d + 1). A key: rank r is row r - 1, and it has no nulls. */
export function rankStart(column: StoredColumn, r: number): number {
  const starts = column.rankStarts;
  return starts === null ? (r === 0 ? 0 : r - 1) : starts[r];
}

/** Sets in `bits` the rows at positions [from, to) of the column's order (a range of rows for a key), pausing every `PIECE` positions. */
function* setPositions(bits: Bitmap, column: StoredColumn, from: number, to: number): Work<void> {
  const perm = column.rowsByValue;
  if (perm === null) {
    setRange(bits, from, to);
    return;
  }
  for (let start = from; start < to; start += PIECE) {
    const end = Math.min(to, start + PIECE);
    for (let i = start; i < end; i++) {
      const row = perm[i];
      bits[row >>> 5] |= 1 << (row & 31);
    }
    yield;
  }
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

/** The ranks [first + 1, last] a range test's interval covers (first ≤ last; empty when equal). */
function rangeRanks(column: StoredColumn, test: Extract<ColumnTest, { op: "range" }>): { first: number; last: number } {
  const distinct = column.distinct as Float64Array;
  const first = firstAtLeast(distinct, test.lo, test.loOpen);
  return { first, last: Math.max(first, firstAtLeast(distinct, test.hi, !test.hiOpen)) };
}

/**
 * Which ranks pass `test` (index = rank, 0 = null; length d + 1): each distinct value decided
 * once. What a test on the partition column becomes (engine/planner.ts), and the text tests'
 * evaluation.
 */
export function orderedPassingRanks(values: OrderedValues, column: StoredColumn, test: ColumnTest): Uint8Array {
  return finish(passingRanks(values, column, test));
}

/** {@link orderedPassingRanks} as work: a text test formats the distinct values `PIECE` at a time. */
function* passingRanks(values: OrderedValues, column: StoredColumn, test: ColumnTest): Work<Uint8Array> {
  const d = distinctCount(column);
  const pass = new Uint8Array(d + 1);
  switch (test.op) {
    case "null":
      if (test.negate) pass.fill(1, 1);
      else pass[0] = 1;
      return pass;
    case "range": {
      const { first, last } = rangeRanks(column, test);
      if (test.negate) {
        pass.fill(1, 1, first + 1);
        pass.fill(1, last + 1);
      } else pass.fill(1, first + 1, last + 1);
      return pass;
    }
    case "set": {
      if (test.nulls) pass[0] = 1;
      const stored: number[] = [];
      for (const v of test.values) stored.push(...values.valuesOf(column.spec, v));
      for (const r of ranksOf(column, stored)) pass[r] = 1;
      return pass;
    }
    case "text": {
      const needle = fold(test.value);
      if (nullPassesText(test.type)) pass[0] = 1;
      if (test.type === "equals" || test.type === "notEqual") {
        // one value (or all but one): found by parsing, not by formatting every value
        const equal = test.type === "equals" ? 1 : 0;
        if (equal === 0) pass.fill(1, 1);
        for (const r of ranksOf(column, values.valuesOf(column.spec, needle))) pass[r] = equal;
        return pass;
      }
      const distinct = column.distinct as Float64Array;
      for (let start = 1; start <= d; start += PIECE) {
        const end = Math.min(d, start + PIECE - 1);
        for (let r = start; r <= end; r++) if (textPasses(test.type, fold(values.format(column.spec, distinct[r - 1])), needle)) pass[r] = 1;
        yield;
      }
      return pass;
    }
  }
}

/**
 * Evaluates a column test on an ordered column: the rows of the ranks that pass, slices of the
 * column's order. Cost: a range or null test O(matching rows + log d); a set test O(values ·
 * log d + matching rows); a text test O(d) value formats (one per distinct value) + O(matching
 * rows). Pauses every `PIECE` rows or values.
 */
export function* evaluateOrdered(values: OrderedValues, column: StoredColumn, test: ColumnTest, rowCount: number): Work<Bitmap> {
  const bits = emptyBitmap(rowCount);
  if (test.op === "range") {
    // contiguous ranks: one or two slices, without a per-rank array (a key has a rank per row)
    const { first, last } = rangeRanks(column, test);
    const from = rankStart(column, first + 1);
    const to = rankStart(column, last + 1);
    if (test.negate) {
      yield* setPositions(bits, column, rankStart(column, 1), from);
      yield* setPositions(bits, column, to, rowCount);
    } else yield* setPositions(bits, column, from, to);
    return bits;
  }
  if (test.op === "null") {
    if (test.negate) yield* setPositions(bits, column, rankStart(column, 1), rowCount);
    else yield* setPositions(bits, column, 0, rankStart(column, 1));
    return bits;
  }
  const pass = yield* passingRanks(values, column, test);
  // runs of passing ranks are one slice each
  let r = 0;
  let pause = PIECE;
  while (r < pass.length) {
    if (r >= pause) {
      // a key has a rank per row: the ranks themselves are a long loop
      pause = r + PIECE;
      yield;
    }
    if (pass[r] === 0) {
      r++;
      continue;
    }
    let end = r + 1;
    while (end < pass.length && pass[end] === 1) end++;
    yield* setPositions(bits, column, rankStart(column, r), rankStart(column, end));
    r = end;
  }
  return bits;
}

/**
 * A test of one stored value (NaN for null), compiled: the rules {@link evaluateOrdered} applies to
 * a column — a range's ends, a set's values resolved to stored values once, a text test's needle
 * folded once; null passes only a negated null test, a set with `nulls`, and the text tests
 * AG Grid lets null pass.
 */
export function orderedValueTest(values: OrderedValues, spec: ColumnSpec, test: ColumnTest): ValueTest {
  const stored = (value: number | string | null) => (typeof value === "number" ? value : Number.NaN);
  switch (test.op) {
    case "null":
      return (value) => Number.isNaN(stored(value)) !== test.negate;
    case "range": {
      const { lo, hi, loOpen, hiOpen, negate } = test;
      return (value) => {
        const x = stored(value);
        if (Number.isNaN(x)) return false;
        return ((loOpen ? x > lo : x >= lo) && (hiOpen ? x < hi : x <= hi)) !== negate;
      };
    }
    case "set": {
      const passing = new Set<number>();
      for (const v of test.values) for (const x of values.valuesOf(spec, v)) passing.add(x);
      const nulls = test.nulls;
      return (value) => {
        const x = stored(value);
        return Number.isNaN(x) ? nulls : passing.has(x);
      };
    }
    case "text": {
      const type = test.type;
      const needle = fold(test.value);
      const nullPasses = nullPassesText(type);
      return (value, folded) => {
        const x = stored(value);
        return Number.isNaN(x) ? nullPasses : textPasses(type, folded ?? fold(values.format(spec, x)), needle);
      };
    }
  }
}

/** Largest distinct-value count whose text tests the planner prices exactly (formatting every value). */
const EXACT_TEXT_ESTIMATE_VALUES = 4096;

/**
 * Rows {@link evaluateOrdered} returns for `test`: exact from the rank starts for null, range and
 * set tests and for text tests on at most {@link EXACT_TEXT_ESTIMATE_VALUES} distinct values;
 * a quarter of the rows for other text tests.
 */
export function orderedEstimate(values: OrderedValues, column: StoredColumn, test: ColumnTest, rowCount: number): number {
  const d = distinctCount(column);
  if (test.op === "null") return test.negate ? rowCount - rankStart(column, 1) : rankStart(column, 1);
  if (test.op === "range") {
    const { first, last } = rangeRanks(column, test);
    const inside = rankStart(column, last + 1) - rankStart(column, first + 1);
    return test.negate ? rowCount - rankStart(column, 1) - inside : inside;
  }
  if (test.op === "text" && !(test.type === "equals" || test.type === "notEqual") && d > EXACT_TEXT_ESTIMATE_VALUES) return rowCount / 4;
  if (test.op === "set" && test.values.length > EXACT_TEXT_ESTIMATE_VALUES) return rowCount / 4;
  const pass = orderedPassingRanks(values, column, test);
  let rows = 0;
  for (let r = 0; r < pass.length; r++) if (pass[r] === 1) rows += rankStart(column, r + 1) - rankStart(column, r);
  return rows;
}

/**
 * The work {@link evaluateOrdered} does for `test`, in rows or values visited (engine/planner.ts):
 * the matching rows set, plus one format per distinct value for a text test other than equality.
 */
export function orderedWork(values: OrderedValues, column: StoredColumn, test: ColumnTest, rowCount: number): number {
  // a key's rows are a range of rows: set a word at a time
  if (column.rowsByValue === null && (test.op === "range" || test.op === "null")) return rowCount / 32;
  const rows = Math.min(rowCount, orderedEstimate(values, column, test, rowCount));
  if (test.op === "text" && test.type !== "equals" && test.type !== "notEqual") return rows + distinctCount(column) * 8;
  return rows;
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
 * The GET form of a range kind (number, date, datetime; docs/api.md "Filter model"):
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

/** A writer of `rows` stored doubles (kind.ts `ColumnWriter`), made into the kind's converted column by its layout. */
function doublesWriter(values: OrderedValues, spec: ColumnSpec, rows: number): ColumnWriter {
  const stored = new Float64Array(rows);
  let at = 0;
  let nulls = 0;
  return {
    from: "double",
    put(x) {
      if (x !== x) nulls++;
      stored[at++] = x;
    },
    finish: () => values.fromDoubles(spec, stored, nulls),
  };
}

/** An ordered kind's module from its {@link OrderedValues} and the rest of its description. */
export function orderedKind(
  kind: KindModule["kind"],
  values: OrderedValues,
  rest: Pick<
    KindModule,
    | "facet"
    | "convert"
    | "filterTypes"
    | "getFilter"
    | "getFormDoc"
    | "dayInterval"
    | "jsonSchema"
    | "setValue"
    | "searchable"
    | "recordValue"
    | "claimValue"
    | "claimForm"
    | "example"
    | "postgresValue"
    | "postgresTypes"
  > & {
    /** AG Grid's `absolute` sort by magnitude (default false; the number kind's). */
    absoluteSort?: boolean;
    /** Builds the column (default {@link buildOrdered}); the number kind adds a key's trigram lists. */
    build?: KindModule["build"];
    /** What a column of the kind does as the key, and the parts a key sets (default: none, for a kind that cannot be the key). */
    key?: { role: KeyRole; parts: readonly StoredPart[] };
    /** Distinct values of a converted column of a kind that may partition the rows (default: none). */
    partitionValues?: KindModule["partitionValues"];
  },
): KindModule {
  const { build, key, partitionValues, absoluteSort, ...described } = rest;
  return {
    kind,
    sortable: true,
    absoluteSort: absoluteSort ?? false,
    searchIndexed: false,
    valueType: "double",
    key: key?.role ?? null,
    parts: (role) => (role.key ? (key?.parts ?? []) : ORDERED_PARTS),
    build: build ?? ((spec, converted, context) => buildOrdered(spec, values.storedValues(converted), context)),
    literals: (spec, converted) => orderedLiterals(spec, values.storedValues(converted), values.json),
    valueAt: values.valueAt,
    writer: (spec, rows) => doublesWriter(values, spec, rows),
    buildWork: values.buildWork,
    partitionValues: partitionValues ?? null,
    evaluate: (column, test, rowCount) => evaluateOrdered(values, column, test, rowCount),
    work: (column, test, rowCount) => orderedWork(values, column, test, rowCount),
    estimate: (column, test, rowCount) => orderedEstimate(values, column, test, rowCount),
    passingRanks: (column, test) => orderedPassingRanks(values, column, test),
    valueTest: (spec, test) => orderedValueTest(values, spec, test),
    valueJson: values.json,
    format: values.format,
    ...described,
  };
}
