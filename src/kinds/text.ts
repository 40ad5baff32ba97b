/**
 * The `text` kind (docs/api.md "Any users table: the schema"): strings as given, null apart from "".
 * Ordered by the collation rule (collation/sort.ts), nulls first; text filters on the folded
 * value (a byte scan of the folded column, or its trigram lists: engine/planner.ts), set filters
 * on whole folded values; GET `filter[col]` a substring. Blank rows (null, or white space only)
 * are a prebuilt bitmap. A text key (a UUID, say) is never null and is ordered by code point: the
 * row order itself; its GET filter takes whole values.
 */
import { type Bitmap, emptyBitmap, notInPlace } from "../bits/bitmap.ts";
import { bytesMatch, type PositiveTextOp } from "../bits/folded-match.ts";
import { fold } from "../collation/collation.ts";
import { foldColumn } from "../collation/fold-column.ts";
import { sortUtf8ByCollation } from "../collation/sort.ts";
import { type ConvertedColumn, convertText } from "./convert.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import { type ByteColumn, appendBytes, appendString, finishByteColumn, gatherByteColumn, growingByteColumn, packJsonLiterals, stringAt } from "../bits/byte-column.ts";
import { type BuildContext, type ColumnTest, type ColumnWriter, type KindModule, type StoredColumn, type StoredPart, TRIGRAM_PARTS, type TextOp, type ValueTest, emptyStoredColumn } from "./kind.ts";
import { stringsKey } from "./key.ts";
import { nullPassesText, textPasses } from "./ordered.ts";
import { partitionRows } from "./ordered-column.ts";
import { buildTrigramIndex } from "../bits/trigrams.ts";
import { PIECE, type Work } from "../bits/work.ts";

type TextColumn = Extract<ConvertedColumn, { kind: "text" }>;

const encoder = new TextEncoder();
const NULL_LITERAL = encoder.encode("null");
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
// ignoreBOM: a value may start with U+FEFF, which is kept
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * A text column written from its JSON literals (kind.ts `ColumnWriter`): a string literal's
 * characters (copied as bytes when it has no escape, else unescaped), `null` a null row.
 */
function textWriter(rows: number): ColumnWriter {
  const out = growingByteColumn(Math.max(16, rows), Math.max(1024, rows * 16));
  const isNull = new Uint8Array(rows);
  let row = 0;
  let nulls = 0;
  return {
    from: "literal",
    put(bytes, start, end) {
      if (bytes[start] !== QUOTE) {
        // null: an empty string, marked
        appendBytes(out, bytes, start, start);
        isNull[row] = 1;
        nulls++;
      } else {
        let plain = true;
        for (let j = start + 1; j < end - 1; j++) if (bytes[j] === BACKSLASH) plain = false;
        if (plain) appendBytes(out, bytes, start + 1, end - 1);
        else appendString(out, JSON.parse(decoder.decode(bytes.subarray(start, end))) as string);
      }
      row++;
    },
    finish: () => ({ kind: "text", strings: finishByteColumn(out), isNull, nulls }),
  };
}

/**
 * Builds a text column: values gathered to store rows, folded bytes, blank rows and trigram lists
 * grouped by the partition; for a column that is not the key, the collation order with nulls
 * first and its per-partition copy (a text key's order is the row order: code points).
 */
function buildText(spec: ColumnSpec, converted: ConvertedColumn, context: BuildContext): StoredColumn {
  const c = converted as TextColumn;
  const n = c.isNull.length;
  const order = context.order;
  const strings = order === null ? c.strings : gatherByteColumn(c.strings, order);
  let isNull = c.isNull;
  if (order !== null) {
    isNull = new Uint8Array(n);
    for (let row = 0; row < n; row++) isNull[row] = c.isNull[order[row]];
  }
  const column = emptyStoredColumn(spec, context.key);
  if (!context.key) {
    const sorted = sortUtf8ByCollation(strings);
    // Nulls first (rank 0, in row order), then the values in collation order, ranks renumbered densely from 1.
    const rankByRow = new Uint32Array(n);
    const rowsByValue = new Uint32Array(n);
    let at = 0;
    for (let row = 0; row < n; row++) if (isNull[row] === 1) rowsByValue[at++] = row;
    const nulls = at;
    const starts: number[] = [0, nulls];
    let rank = 0;
    let previous = -1;
    for (let i = 0; i < n; i++) {
      const row = sorted.order[i];
      if (isNull[row] === 1) continue;
      if (sorted.ranks[row] !== previous) {
        previous = sorted.ranks[row];
        rank++;
        if (rank > 1) starts.push(at);
      }
      rankByRow[row] = rank;
      rowsByValue[at++] = row;
    }
    if (rank > 0) starts.push(n);
    else starts[1] = n;
    column.rankByRow = rankByRow;
    column.rowsByValue = rowsByValue;
    column.rankStarts = Uint32Array.from(starts);
    if (context.partition !== null) column.rowsByValueByPartition = partitionRows(rowsByValue, context.partition.codes, context.partition.counts);
  }
  const folded = foldColumn(strings);
  const blank = emptyBitmap(n);
  const fb = folded.bytes;
  const fo = folded.offsets;
  for (let row = 0; row < n; row++) {
    if (isNull[row] === 1) {
      blank[row >>> 5] |= 1 << (row & 31);
      continue;
    }
    const start = fo[row];
    if (start !== fo[row + 1]) {
      const b = fb[start];
      // a printable ASCII byte other than space cannot start a blank value
      if (b > 0x20 && b < 0x80) continue;
      if (stringAt(strings, row).trim() !== "") continue;
    }
    blank[row >>> 5] |= 1 << (row & 31);
  }
  column.folded = folded.bytes;
  column.foldedOffsets = folded.offsets;
  column.blank = blank;
  if (context.key) {
    column.raw = strings.bytes;
    column.rawOffsets = strings.offsets;
  }
  const groups = context.partition === null ? null : { codes: context.partition.codes, count: context.partition.counts.length };
  column.trigrams = buildTrigramIndex(folded.bytes, folded.offsets, n, groups);
  return column;
}

/** Every row's JSON string literal (`null` for null), in input order. */
function textLiterals(_spec: ColumnSpec, converted: ConvertedColumn): ByteColumn {
  const c = converted as TextColumn;
  const literals = packJsonLiterals(c.strings);
  if (c.nulls === 0) return literals;
  const n = c.isNull.length;
  const bytes = new Uint8Array(literals.bytes.length + c.nulls * 4);
  const offsets = new Uint32Array(n + 1);
  let at = 0;
  for (let i = 0; i < n; i++) {
    if (c.isNull[i] === 1) {
      bytes.set(NULL_LITERAL, at);
      at += 4;
    } else {
      const from = literals.offsets[i];
      const to = literals.offsets[i + 1];
      bytes.set(literals.bytes.subarray(from, to), at);
      at += to - from;
    }
    offsets[i + 1] = at;
  }
  return { bytes: bytes.subarray(0, at), offsets };
}

/**
 * The positive form of a text operator (what a byte match or a trigram list answers), and whether
 * its result is complemented; null for `blank` and `notBlank`, which the blank bitmap answers.
 */
export function positiveText(type: TextOp): { op: PositiveTextOp; negate: boolean } | null {
  switch (type) {
    case "notContains":
      return { op: "contains", negate: true };
    case "notEqual":
      return { op: "equals", negate: true };
    case "contains":
    case "equals":
    case "startsWith":
    case "endsWith":
      return { op: type, negate: false };
    default:
      return null;
  }
}

/**
 * Sets in `bits` the rows of [from, to) whose folded value satisfies `op` against `needle`
 * (`negate`: does not), null rows passing as `nullPasses`: one piece of a text test's scan.
 */
function scanText(column: StoredColumn, op: PositiveTextOp, negate: boolean, needle: Uint8Array, nullPasses: boolean, bits: Bitmap, from: number, to: number): void {
  // a key has no null: every row's rank is then taken as 1
  const ranks = column.rankByRow ?? new Uint32Array(0);
  const keyed = column.rankByRow === null;
  const bytes = column.folded as Uint8Array;
  const offsets = column.foldedOffsets as Uint32Array;
  for (let row = from; row < to; row++) {
    const pass = !keyed && ranks[row] === 0 ? nullPasses : bytesMatch(bytes, offsets[row], offsets[row + 1], op, needle) !== negate;
    if (pass) bits[row >>> 5] |= 1 << (row & 31);
  }
}

/** Sets in `bits` the rows of [from, to) whose folded value is one of the needles (by byte length): one piece of a set test's scan. */
function scanSet(column: StoredColumn, byLength: Map<number, Uint8Array[]>, bits: Bitmap, from: number, to: number): void {
  const ranks = column.rankByRow ?? new Uint32Array(0);
  const keyed = column.rankByRow === null;
  const bytes = column.folded as Uint8Array;
  const offsets = column.foldedOffsets as Uint32Array;
  for (let row = from; row < to; row++) {
    if (!keyed && ranks[row] === 0) continue;
    const list = byLength.get(offsets[row + 1] - offsets[row]);
    if (list === undefined) continue;
    for (const needle of list) {
      if (bytesMatch(bytes, offsets[row], offsets[row + 1], "equals", needle)) {
        bits[row >>> 5] |= 1 << (row & 31);
        break;
      }
    }
  }
}

/**
 * Evaluates a column test on a text column: blank tests from the blank bitmap, the others by
 * one scan of the folded bytes (O(rowCount), pausing every `PIECE` rows); null rows pass only
 * `notEqual`, `notContains` and `blank` (AG Grid's rule), and a set test's `nulls`.
 */
function* evaluateText(column: StoredColumn, test: ColumnTest, rowCount: number): Work<Bitmap> {
  const keyed = column.rankByRow === null;
  const blank = column.blank as Uint32Array;
  const bits = emptyBitmap(rowCount);
  switch (test.op) {
    case "null": {
      if (!keyed) {
        const perm = column.rowsByValue as Uint32Array;
        const nulls = (column.rankStarts as Uint32Array)[1];
        for (let i = 0; i < nulls; i++) bits[perm[i] >>> 5] |= 1 << (perm[i] & 31);
      }
      return test.negate ? notInPlace(bits, rowCount) : bits;
    }
    case "text": {
      if (test.type === "blank") return blank.slice();
      if (test.type === "notBlank") return notInPlace(blank.slice(), rowCount);
      const positive = positiveText(test.type);
      if (positive === null) throw new Error(`no positive form of ${test.type}`);
      const { op, negate } = positive;
      const needle = encoder.encode(fold(test.value));
      const nullPasses = nullPassesText(test.type);
      for (let from = 0; from < rowCount; from += PIECE) {
        scanText(column, op, negate, needle, nullPasses, bits, from, Math.min(rowCount, from + PIECE));
        yield;
      }
      return bits;
    }
    case "set": {
      // needles by byte length: a row is compared only with the needles of its length
      const byLength = new Map<number, Uint8Array[]>();
      for (const v of new Set(test.values)) {
        const needle = encoder.encode(v);
        const list = byLength.get(needle.length);
        if (list === undefined) byLength.set(needle.length, [needle]);
        else list.push(needle);
      }
      for (let from = 0; from < rowCount; from += PIECE) {
        scanSet(column, byLength, bits, from, Math.min(rowCount, from + PIECE));
        yield;
      }
      // docs/api.md: null in a set filter's values matches null and, on text columns, blank strings
      if (test.nulls) for (let w = 0; w < bits.length; w++) bits[w] |= blank[w];
      return bits;
    }
    case "range":
      throw new Error(`a range test does not apply to text column "${column.spec.id}"`);
  }
}

/** Rows a text test is expected to match when nothing better is known: a fraction of the rows (engine/planner.ts refines substring tests from the trigram lists). */
function estimateText(column: StoredColumn, test: ColumnTest, rowCount: number): number {
  if (test.op === "null") {
    const nulls = column.rankStarts === null ? 0 : column.rankStarts[1];
    return test.negate ? rowCount - nulls : nulls;
  }
  if (test.op === "set") return Math.min(rowCount, test.values.length + (test.nulls ? rowCount / 100 : 0));
  if (test.op === "text") {
    if (test.type === "blank") return rowCount / 100;
    if (test.type === "equals") return 1;
    if (test.type === "notEqual" || test.type === "notBlank" || test.type === "notContains") return rowCount;
  }
  return rowCount / 10;
}

/**
 * A test of one value (null for null), compiled: the rules {@link evaluateText} applies to a
 * column — folded comparisons (the needle folded once), null passing only `notEqual`,
 * `notContains` and `blank`, a set's `nulls` matching null and blank values.
 */
function textValueTest(_spec: ColumnSpec, test: ColumnTest): ValueTest {
  switch (test.op) {
    case "null":
      return (value) => (typeof value !== "string") !== test.negate;
    case "text": {
      const type = test.type;
      if (type === "blank") return (value) => typeof value !== "string" || value.trim() === "";
      if (type === "notBlank") return (value) => typeof value === "string" && value.trim() !== "";
      const needle = fold(test.value);
      const nullPasses = nullPassesText(type);
      return (value, folded) => (typeof value !== "string" ? nullPasses : textPasses(type, folded ?? fold(value), needle));
    }
    case "set": {
      const values = new Set(test.values);
      const nulls = test.nulls;
      return (value, folded) => (typeof value !== "string" ? nulls : (nulls && value.trim() === "") || values.has(folded ?? fold(value)));
    }
    case "range":
      throw new Error("a range test does not apply to a text column");
  }
}

/** The `text` kind. */
export const TEXT_KIND: KindModule = {
  kind: "text",
  facet: "values",
  sortable: true,
  absoluteSort: false,
  searchable: true,
  searchIndexed: true,
  key: stringsKey((converted) => converted as TextColumn),
  valueType: "string",
  recordValue: "string",
  valueAt(converted, row) {
    const c = converted as TextColumn;
    return c.isNull[row] === 1 ? null : stringAt(c.strings, row);
  },
  writer: (_spec, rows) => textWriter(rows),
  // a collation sort of the strings, their folded bytes and trigram lists
  buildWork: (converted) => (converted as TextColumn).strings.bytes.length * 8 + (converted as TextColumn).isNull.length * 16,
  partitionValues: null,
  convert: convertText,
  getFormDoc: (key) => (key ? "A whole value, or a comma list meaning any of them; case- and accent-insensitive." : "Substring, case- and accent-insensitive."),
  filterTypes: ["text", "set"],
  parts: (role) => (role.key ? KEY_PARTS : PARTS),
  build: buildText,
  literals: textLiterals,
  evaluate: evaluateText,
  work: (_column, test, rowCount) => (test.op === "text" && (test.type === "blank" || test.type === "notBlank") ? rowCount / 32 : rowCount * 4),
  estimate: estimateText,
  passingRanks: null,
  valueTest: textValueTest,
  getFilter(_spec, value, key) {
    if (!key) return { tests: [{ op: "text", type: "contains", value }], echo: value };
    // a text key: whole values, a comma list meaning any of them (docs/api.md "Any users table: the schema")
    // one value per folded form, the first spelling echoed
    const byFolded = new Map<string, string>();
    for (const item of value.split(",")) {
      const v = item.trim();
      if (v !== "" && !byFolded.has(fold(v))) byFolded.set(fold(v), v);
    }
    if (byFolded.size === 0) return `no value given (got "${value}")`;
    return { tests: [{ op: "set", values: [...byFolded.keys()], nulls: false }], echo: [...byFolded.values()].join(",") };
  },
  dayInterval: null,
  setValue: (_spec, text) => fold(text),
  valueJson: null,
  format: null,
  jsonSchema: (_spec, key) => (key ? { type: "string" } : { type: ["string", "null"] }),
  claimValue: (_spec, value) => (typeof value === "string" ? value : null),
  claimForm: "a string",
  example: () => "x",
  postgresValue: null,
  // text, varchar, bpchar, name, uuid
  postgresTypes: [25, 1043, 1042, 19, 2950],
};

/** The parts a text column sets. */
const PARTS: readonly StoredPart[] = ["rankByRow", "rowsByValue", "rankStarts", "folded", "foldedOffsets", "blank", ...TRIGRAM_PARTS];

/** The parts a text key sets (its order is the row order; its raw values find a key's row). */
const KEY_PARTS: readonly StoredPart[] = ["folded", "foldedOffsets", "blank", "raw", "rawOffsets", ...TRIGRAM_PARTS];
