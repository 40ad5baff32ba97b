/**
 * The delta of a live replica (docs/live-replicas.md §3, §5): the rows changed since the loaded
 * snapshot (the base), kept beside it.
 *
 * - {@link DeltaStore}: shared by every version, append-only: the delta rows (numbered from the
 *   base's row count N on, in the order they were applied), their values per column, their JSON
 *   records, their key's place among the base keys, each text column's trigram lists, and the
 *   lists of rows that died (base rows tombstoned, delta rows replaced or deleted) in the order
 *   they died. Nothing a version can see is ever changed: a new batch only appends.
 * - {@link DeltaVersion}: one immutable state — how many delta rows and deaths it sees, and its
 *   own copies of the two tombstone bitmaps — what a request reads from start to end.
 *
 * Applying a batch converts its records by the snapshot's schema (the kinds' rules, as a build
 * does), refusing the whole batch before anything is appended when one does not fit, then kills
 * the rows of every key it touches and appends the new versions of the upserted ones.
 */
import { type Bitmap, emptyBitmap } from "../bits/bitmap.ts";
import { trigramKey } from "../bits/trigrams.ts";
import { collator, fold } from "../collation/collation.ts";
import { collationKey } from "../collation/sort-key.ts";
import { firstAtLeast } from "../kinds/ordered-column.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import type { ConvertedColumn } from "../kinds/convert.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import { tableOfObjects } from "../snapshot/objects.ts";
import { decodeValue, memberSpan } from "../store/record-fields.ts";
import { buildRecords } from "../store/records.ts";
import { type Store, keyColumn } from "../store/types.ts";
import { recordSpan } from "../store/records.ts";
import { BatchError, type ChangeBatch, lsnValue } from "./changes.ts";

/** A key's value: a number key's number, a text key's string. */
export type KeyValue = number | string;

/** One column's values over the delta rows (index = delta row − N). */
export interface DeltaColumn {
  spec: ColumnSpec;
  /** The base's column. */
  stored: StoredColumn;
  /** The column's position in the schema (and in every record). */
  position: number;
  /** Kinds whose values are doubles (kind.ts `ValueType`: every kind but text and json): each row's stored double (NaN for null); length ≥ rows. */
  doubles: Float64Array | null;
  /** Kinds whose values are strings (text): each row's value (null for null). */
  strings: (string | null)[] | null;
  /**
   * Columns with trigram lists in the base (text, and the key): each row's folded output string
   * ("" for null): what text tests and search terms compare.
   */
  folded: string[] | null;
  /** Trigram lists over `folded`: trigram key → delta rows (ascending, local indexes); null without. */
  grams: Map<number, number[]> | null;
  /**
   * Each row's rank² in the base's order of the column (docs/live-replicas.md "Rank²"): 2r for a
   * value equal to the base's rank r, 2r + 1 for one strictly between ranks r and r + 1 (0 for
   * null). Computed on first use up to `ranked` rows; null for the key and `json`.
   */
  rank2: Float64Array | null;
  ranked: number;
}

/** The shared, append-only part of a live replica's delta (see the module comment). */
export interface DeltaStore {
  base: Store;
  /** Delta rows appended, M′ (live or dead). */
  rows: number;
  /** Every column but those whose values live in the records alone (json), by id. */
  columns: Map<string, DeltaColumn>;
  /** The key column's delta part. */
  key: DeltaColumn;
  /** Each delta row's key. */
  keys: KeyValue[];
  /**
   * Each delta row's place in key order among the base rows: 2·(base keys below its key), so
   * that base row r (at 2r + 1) and delta rows compare by it; equal for two delta rows only when
   * no base key lies between them (then their keys decide).
   */
  keyOrd: Float64Array;
  /** The delta rows' records, back to back (as the base's: every column in schema order). */
  recordBytes: Uint8Array;
  /** Row d's record is `recordBytes[recordOffsets[d] .. recordOffsets[d + 1])`; length ≥ rows + 1. */
  recordOffsets: Float64Array;
  /** Base rows tombstoned, in the order they died; `deaths` of them. */
  deadBase: Uint32Array;
  deaths: number;
  /** Delta rows (local) replaced or deleted, in the order they died; `deltaDeaths` of them. */
  deadDelta: Uint32Array;
  deltaDeaths: number;
  /** The latest state's tombstones over the base rows (a version copies it). */
  baseDead: Bitmap;
  /** The latest state's dead delta rows (local indexes; grown). */
  deltaDead: Uint32Array;
  /** The live delta row (local) of each key changed since the base, in the latest state. */
  keyMap: Map<KeyValue, number>;
  /**
   * Per base column with trigram lists: per trigram key, the tombstoned base rows holding it, by
   * partition code (length S), in the latest state: how many rows of one posting list are dead,
   * without decoding the list.
   */
  deadGrams: Map<string, Map<number, Uint32Array>>;
}

/** One immutable state of the delta: what a request sees from its start to its end. */
export interface DeltaVersion {
  delta: DeltaStore;
  /** Delta rows this version sees (local indexes 0 … rows − 1). */
  rows: number;
  /** Base rows dead in this version: the first `deaths` of `delta.deadBase`; bitmap over the N base rows. */
  deaths: number;
  baseDead: Bitmap;
  /** Dead delta rows: the first `deltaDeaths` of `delta.deadDelta`; bitmap over the `rows` delta rows. */
  deltaDeaths: number;
  deltaDead: Uint32Array;
  /** Live delta rows: rows − deltaDeaths. */
  live: number;
  /** LSN of the last batch applied (`XXXXXXXX/XXXXXXXX`). */
  lsn: string;
  /** Commit time of the last change applied, UTC milliseconds. */
  commitTime: number;
  /** Batches applied on the base, 1 for the first. */
  sequence: number;
}

/** A copy of `a` with room for at least `need` elements (doubling). */
function room<T extends Float64Array | Uint32Array | Uint8Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  let capacity = Math.max(16, a.length * 2);
  while (capacity < need) capacity *= 2;
  const out = new (a.constructor as new (n: number) => T)(capacity);
  out.set(a);
  return out;
}

/** An empty delta over `base`. */
export function createDelta(base: Store): DeltaStore {
  const columns = new Map<string, DeltaColumn>();
  base.schema.columns.forEach((spec, position) => {
    // a kind whose values live in the records alone (json) keeps nothing here
    const valueType = KINDS[spec.kind].valueType;
    if (valueType === null) return;
    const stored = base.columns.get(spec.id) as StoredColumn;
    columns.set(spec.id, {
      spec,
      stored,
      position,
      doubles: valueType === "double" ? new Float64Array(16) : null,
      strings: valueType === "string" ? [] : null,
      folded: stored.trigrams !== null ? [] : null,
      grams: stored.trigrams !== null ? new Map() : null,
      rank2: stored.rankByRow !== null ? new Float64Array(16) : null,
      ranked: 0,
    });
  });
  const key = columns.get(base.schema.key) as DeltaColumn;
  return {
    base,
    rows: 0,
    columns,
    key,
    keys: [],
    keyOrd: new Float64Array(16),
    recordBytes: new Uint8Array(4096),
    recordOffsets: new Float64Array(16),
    deadBase: new Uint32Array(16),
    deaths: 0,
    deadDelta: new Uint32Array(16),
    deltaDeaths: 0,
    baseDead: emptyBitmap(base.rowCount),
    deltaDead: new Uint32Array(1),
    keyMap: new Map(),
    deadGrams: new Map([...columns.values()].filter((c) => c.grams !== null).map((c) => [c.spec.id, new Map<number, Uint32Array>()])),
  };
}

/** The version of a delta with nothing applied: what a replica starts from on a new snapshot. */
export function emptyVersion(delta: DeltaStore, lsn: string): DeltaVersion {
  return { delta, rows: 0, deaths: 0, baseDead: emptyBitmap(delta.base.rowCount), deltaDeaths: 0, deltaDead: new Uint32Array(1), live: 0, lsn, commitTime: 0, sequence: 0 };
}

/** Base keys below `key` (a binary search of the base's key order): the base row holding it when equal. */
function baseKeysBelow(base: Store, key: KeyValue): number {
  const column = keyColumn(base);
  if (typeof key === "number") return firstAtLeast(column.distinct as Float64Array, key, false);
  const raw = column.raw as Uint8Array;
  const offsets = column.rawOffsets as Uint32Array;
  const probe = encoder.encode(key);
  let lo = 0;
  let hi = base.rowCount;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareBytes(raw, offsets[mid], offsets[mid + 1], probe) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const encoder = new TextEncoder();

/** Compares `bytes[from .. to)` with `probe` bytewise (UTF-8 byte order is code point order). */
function compareBytes(bytes: Uint8Array, from: number, to: number, probe: Uint8Array): number {
  const n = Math.min(to - from, probe.length);
  for (let i = 0; i < n; i++) {
    const d = bytes[from + i] - probe[i];
    if (d !== 0) return d;
  }
  return to - from - probe.length;
}

/** True when base row `row` holds `key`. */
function baseHoldsKey(base: Store, row: number, key: KeyValue): boolean {
  if (row >= base.rowCount) return false;
  const column = keyColumn(base);
  if (typeof key === "number") return (column.distinct as Float64Array)[row] === key;
  const offsets = column.rawOffsets as Uint32Array;
  return compareBytes(column.raw as Uint8Array, offsets[row], offsets[row + 1], encoder.encode(key)) === 0;
}

/**
 * Compares two keys of one key column: numbers by value, strings by code point (docs/api.md
 * "The key"): UTF-16 order but for the surrogates, moved above the other code units.
 */
export function compareKeys(a: KeyValue, b: KeyValue): number {
  if (typeof a === "number") return a - (b as number);
  const x = a;
  const y = b as string;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const p = x.charCodeAt(i);
    const q = y.charCodeAt(i);
    if (p !== q) return codePointOrder(p) - codePointOrder(q);
  }
  return x.length - y.length;
}

/** A UTF-16 code unit's place in code point order (surrogates after every other unit). */
function codePointOrder(unit: number): number {
  return unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit;
}

/** The net effect of a batch per key, in the order of each key's last change: the record to upsert, or null to delete. */
function netChanges(batch: ChangeBatch, keyId: string): Map<KeyValue, Record<string, unknown> | null> {
  const net = new Map<KeyValue, Record<string, unknown> | null>();
  batch.changes.forEach((change, i) => {
    const key = change.op === "delete" ? change.key : (change.record[keyId] as KeyValue);
    if (typeof key !== "number" && typeof key !== "string") throw new BatchError(`change ${i + 1}: the key "${keyId}" is missing or not a number or a string`);
    // moved to the end: the order of last changes
    net.delete(key);
    net.set(key, change.op === "delete" ? null : change.record);
  });
  return net;
}

/**
 * The upserted records of a batch converted by the base's schema (every column declared), as the
 * columns' typed values and record bytes.
 * @throws BatchError for a record with a field the schema lacks or a value its kind refuses
 */
function convertRecords(base: Store, records: Record<string, unknown>[]): { columns: Map<string, ConvertedColumn>; recordBytes: Uint8Array; recordOffsets: Uint32Array } {
  const schema = base.schema;
  let table: ReturnType<typeof tableOfObjects>;
  try {
    table = tableOfObjects(records, { key: schema.key, columns: schema.columns });
  } catch (error) {
    throw new BatchError(`a record does not fit the snapshot's schema: ${(error as Error).message}`);
  }
  if (table.columns.length !== schema.columns.length) {
    const extra = table.columns.map((c) => c.spec.id).filter((id) => !schema.columns.some((c) => c.id === id));
    throw new BatchError(`a record has fields the snapshot's schema lacks (${extra.map((id) => JSON.stringify(id)).join(", ")}): a schema change needs a new snapshot`);
  }
  const columns = new Map<string, ConvertedColumn>();
  for (const c of table.columns) columns.set(c.spec.id, c.values);
  const fields = schema.columns.map((spec) => ({ id: spec.id, literals: KINDS[spec.kind].literals(spec, columns.get(spec.id) as ConvertedColumn) }));
  const built = buildRecords(fields, records.length, 0);
  return { columns, recordBytes: built.chunks[0], recordOffsets: built.offsets };
}

/** Kills `key`'s live row in the latest state: its base row (tombstoned) and its delta row. */
function kill(delta: DeltaStore, key: KeyValue): void {
  const base = delta.base;
  const row = baseKeysBelow(base, key);
  if (baseHoldsKey(base, row, key) && (delta.baseDead[row >>> 5] & (1 << (row & 31))) === 0) {
    delta.baseDead[row >>> 5] |= 1 << (row & 31);
    delta.deadBase = room(delta.deadBase, delta.deaths + 1);
    delta.deadBase[delta.deaths++] = row;
    countDeadGrams(delta, row);
  }
  const d = delta.keyMap.get(key);
  if (d !== undefined) {
    delta.deltaDead = room(delta.deltaDead, (d >>> 5) + 1);
    delta.deltaDead[d >>> 5] |= 1 << (d & 31);
    delta.deadDelta = room(delta.deadDelta, delta.deltaDeaths + 1);
    delta.deadDelta[delta.deltaDeaths++] = d;
    delta.keyMap.delete(key);
  }
}

/** Adds tombstoned base row `row` to the dead trigram counts of every column with trigram lists. */
function countDeadGrams(delta: DeltaStore, row: number): void {
  const base = delta.base;
  const code = base.partition?.codes[row] ?? 0;
  const groups = base.partition?.counts.length ?? 1;
  for (const [id, counts] of delta.deadGrams) {
    const stored = base.columns.get(id) as StoredColumn;
    let folded: string;
    if (stored.folded !== null && stored.foldedOffsets !== null) folded = gramDecoder.decode(stored.folded.subarray(stored.foldedOffsets[row], stored.foldedOffsets[row + 1]));
    else folded = String((stored.distinct as Float64Array)[row]);
    for (const key of trigramsOf(folded)) {
      let byCode = counts.get(key);
      if (byCode === undefined) counts.set(key, (byCode = new Uint32Array(groups)));
      byCode[code]++;
    }
  }
}

const gramDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Tombstoned base rows per partition code holding trigram `key` of `column`'s lists, in the
 * latest state (null for a column without lists); length S.
 */
export function deadGramCounts(delta: DeltaStore, column: string, key: number): Uint32Array | null {
  const counts = delta.deadGrams.get(column);
  if (counts === undefined) return null;
  return counts.get(key) ?? new Uint32Array(delta.base.partition?.counts.length ?? 1);
}

/** The distinct trigram keys of a folded string, by code point (ascending). */
function trigramsOf(folded: string): number[] {
  const keys: number[] = [];
  let c1 = -1;
  let c2 = -1;
  for (let i = 0; i < folded.length; i++) {
    let c = folded.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < folded.length) c = folded.codePointAt(i++) as number;
    if (c1 >= 0) keys.push(trigramKey(c1, c2, c));
    c1 = c2;
    c2 = c;
  }
  if (keys.length < 2) return keys;
  keys.sort((a, b) => a - b);
  let k = 1;
  for (let i = 1; i < keys.length; i++) if (keys[i] !== keys[k - 1]) keys[k++] = keys[i];
  keys.length = k;
  return keys;
}

/** Appends the converted row `i` of a batch as delta row `d` (local) of every column. */
function appendValues(delta: DeltaStore, converted: Map<string, ConvertedColumn>, i: number, d: number): void {
  for (const column of delta.columns.values()) {
    const value = KINDS[column.spec.kind].valueAt(converted.get(column.spec.id) as ConvertedColumn, i);
    let folded = "";
    if (column.strings !== null) {
      const text = value as string | null;
      column.strings[d] = text;
      folded = text === null ? "" : fold(text);
    } else {
      const x = value as number;
      column.doubles = room(column.doubles as Float64Array, d + 1);
      (column.doubles as Float64Array)[d] = x;
      // a number key's decimal form, as its base trigram lists hold it
      if (column.folded !== null) folded = String(x);
    }
    if (column.folded !== null && column.grams !== null) {
      column.folded[d] = folded;
      for (const key of trigramsOf(folded)) {
        const list = column.grams.get(key);
        if (list === undefined) column.grams.set(key, [d]);
        else list.push(d);
      }
    }
  }
}

/**
 * Applies a batch (docs/live-replicas.md §5): the next version, the delta store appended to. The
 * version `from` stays valid (it sees none of the batch).
 * @param from the current version (its delta store is the one appended to)
 * @throws BatchError, with nothing appended, for a batch whose LSN is not after `from`'s, a
 *   change without a usable key, or a record that does not fit the snapshot's schema
 */
export function applyBatch(from: DeltaVersion, batch: ChangeBatch): DeltaVersion {
  const delta = from.delta;
  if (from.rows !== delta.rows || from.deaths !== delta.deaths || from.deltaDeaths !== delta.deltaDeaths) {
    throw new Error("internal: a batch applies to the latest version only");
  }
  if (from.sequence > 0 && lsnValue(batch.lsn) <= lsnValue(from.lsn)) throw new BatchError(`batch at ${batch.lsn} is not after ${from.lsn}`);
  const keyId = delta.base.schema.key;
  const net = netChanges(batch, keyId);
  const upserts: Record<string, unknown>[] = [];
  for (const record of net.values()) if (record !== null) upserts.push(record);
  const converted = upserts.length > 0 ? convertRecords(delta.base, upserts) : null;
  // a number key arrives as a number, a text key as a string (the conversion checked upserts):
  // a key kind's values are doubles or strings
  const keyKind = delta.key.spec.kind;
  const numberKey = KINDS[keyKind].valueType === "double";
  for (const key of net.keys()) {
    if (numberKey !== (typeof key === "number")) throw new BatchError(`the key ${JSON.stringify(key)} is not a ${keyKind} (the key "${keyId}" is ${keyKind})`);
  }
  // Nothing fails from here on: the batch is appended whole.
  let i = 0;
  for (const [key, record] of net) {
    kill(delta, key);
    if (record === null || converted === null) continue;
    const d = delta.rows++;
    appendValues(delta, converted.columns, i, d);
    delta.keys[d] = key;
    delta.keyOrd = room(delta.keyOrd, d + 1);
    delta.keyOrd[d] = 2 * baseKeysBelow(delta.base, key);
    const start = converted.recordOffsets[i];
    const end = converted.recordOffsets[i + 1];
    delta.recordOffsets = room(delta.recordOffsets, d + 2);
    const at = delta.recordOffsets[d];
    delta.recordBytes = room(delta.recordBytes, at + end - start);
    delta.recordBytes.set(converted.recordBytes.subarray(start, end), at);
    delta.recordOffsets[d + 1] = at + end - start;
    delta.keyMap.set(key, d);
    i++;
  }
  const words = (delta.rows + 31) >>> 5;
  const deltaDead = new Uint32Array(Math.max(1, words));
  deltaDead.set(delta.deltaDead.subarray(0, Math.min(words, delta.deltaDead.length)));
  return {
    delta,
    rows: delta.rows,
    deaths: delta.deaths,
    baseDead: delta.baseDead.slice(),
    deltaDeaths: delta.deltaDeaths,
    deltaDead,
    live: delta.rows - delta.deltaDeaths,
    lsn: batch.lsn,
    commitTime: batch.commitTime,
    sequence: from.sequence + 1,
  };
}

/** True when delta row `d` (local) is dead in `version`. */
export function deltaRowDead(version: DeltaVersion, d: number): boolean {
  return (version.deltaDead[d >>> 5] & (1 << (d & 31))) !== 0;
}

/** True when base row `row` is tombstoned in `version`. */
export function baseRowDead(version: DeltaVersion, row: number): boolean {
  return (version.baseDead[row >>> 5] & (1 << (row & 31))) !== 0;
}

/** The text value of base row `row` in `column` (at schema `position`), read from its record. */
export function baseText(base: Store, row: number, position: number): string | null {
  const { bytes, start, end } = recordSpan(base.records, row);
  const { from, to } = memberSpan(bytes, start, end, position);
  const value = decodeValue(bytes, from, to);
  return typeof value === "string" ? value : null;
}

/** Compares two strings by the collation (docs/api.md "Ordering"), through their keys when both have one. */
function collate(a: string, aKey: string | null, b: string, bKey: string | null): number {
  if (aKey !== null && bKey !== null) return aKey < bKey ? -1 : aKey > bKey ? 1 : 0;
  return collator.compare(a, b);
}

/** Per base column, the collation keys of the values at rank starts probed so far (rank → [value, key]). */
const probeCache = new WeakMap<StoredColumn, Map<number, [string, string | null]>>();

/** The text value at rank `r` (≥ 1) of a base text column, and its collation key. */
function rankValue(base: Store, column: DeltaColumn, r: number): [string, string | null] {
  let cache = probeCache.get(column.stored);
  if (cache === undefined) {
    cache = new Map();
    probeCache.set(column.stored, cache);
  }
  let entry = cache.get(r);
  if (entry === undefined) {
    const row = (column.stored.rowsByValue as Uint32Array)[(column.stored.rankStarts as Uint32Array)[r]];
    const text = baseText(base, row, column.position) ?? "";
    entry = [text, collationKey(text)];
    if (cache.size < 1 << 16) cache.set(r, entry);
  }
  return entry;
}

/** The rank² of one value (see {@link DeltaColumn.rank2}). */
function valueRank2(base: Store, column: DeltaColumn, d: number): number {
  const stored = column.stored;
  if (column.strings !== null) {
    const text = column.strings[d];
    if (text === null) return 0;
    const key = collationKey(text);
    // ranks 1 … R: the first whose value collates at or after the text
    const ranks = (stored.rankStarts as Uint32Array).length - 2;
    let lo = 1;
    let hi = ranks + 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const [value, valueKey] = rankValue(base, column, mid);
      if (collate(value, valueKey, text, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo <= ranks) {
      const [value, valueKey] = rankValue(base, column, lo);
      if (collate(value, valueKey, text, key) === 0) return 2 * lo;
    }
    return 2 * lo - 1;
  }
  const x = (column.doubles as Float64Array)[d];
  if (Number.isNaN(x)) return 0;
  const distinct = stored.distinct as Float64Array;
  const i = firstAtLeast(distinct, x, false);
  return i < distinct.length && distinct[i] === x ? 2 * (i + 1) : 2 * i + 1;
}

/**
 * The rank² of `column`'s delta rows up to `rows` (computed on first use, then kept): index =
 * local delta row. Null for the key and `json`.
 */
export function deltaRanks(delta: DeltaStore, column: DeltaColumn, rows: number): Float64Array | null {
  if (column.rank2 === null) return null;
  if (column.ranked < rows) {
    column.rank2 = room(column.rank2, rows);
    for (let d = column.ranked; d < rows; d++) column.rank2[d] = valueRank2(delta.base, column, d);
    column.ranked = rows;
  }
  return column.rank2;
}

/**
 * The record of the live row holding `key` in `version` (or in the base when null), parsed; null
 * when no live row holds it. For the rare reader of one whole row (a publisher filling in the
 * values PostgreSQL did not resend).
 */
export function currentRecord(base: Store, version: DeltaVersion | null, key: KeyValue): Record<string, unknown> | null {
  const decode = (bytes: Uint8Array) => JSON.parse(recordDecoder.decode(bytes)) as Record<string, unknown>;
  if (version !== null) {
    const delta = version.delta;
    const latest = version.rows === delta.rows && version.deltaDeaths === delta.deltaDeaths;
    // the latest version's key map, else a scan of the rows the version sees
    const found = latest ? (delta.keyMap.get(key) ?? -1) : findLive(version, key);
    if (found >= 0) return decode(delta.recordBytes.subarray(delta.recordOffsets[found], delta.recordOffsets[found + 1]));
  }
  const row = baseKeysBelow(base, key);
  if (!baseHoldsKey(base, row, key) || (version !== null && baseRowDead(version, row))) return null;
  const { bytes, start, end } = recordSpan(base.records, row);
  return decode(bytes.subarray(start, end));
}

const recordDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** The live delta row (local) of `key` in `version`, or -1. */
function findLive(version: DeltaVersion, key: KeyValue): number {
  const delta = version.delta;
  for (let d = version.rows - 1; d >= 0; d--) if (!deltaRowDead(version, d) && compareKeys(delta.keys[d], key) === 0) return d;
  return -1;
}
