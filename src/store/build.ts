/**
 * Builds the store's typed arrays and every index from a table (store/input.ts `TableInput`):
 * the work the snapshot builder does once so that start-up and queries do none of it.
 *
 * 1. The rows are numbered in key order, by the key's kind (kinds/key.ts): a number key
 *    numerically, a text key by code point.
 * 2. The partition is chosen (`choosePartition`) and its column built first: every other
 *    column's posting lists and per-partition permutation are grouped by its codes.
 * 3. Every column is built by its kind (src/kinds) with the key order and the partition codes —
 *    on the two cores in workers (`buildStoreParallel`), or on this thread (`buildStore`).
 * 4. Every row's JSON record is written from the columns' literals (store/records.ts).
 * 5. The search index is built over the searchable columns' values (store/search-index.ts).
 */
import type { TrigramIndex } from "../bits/trigram-index.ts";
import { gatherByteColumn, type ByteColumn } from "../bits/byte-column.ts";
import type { BuildContext, PartitionCodes, StoredColumn } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import { type ColumnSpec, MAX_PARTITION_VALUES, type Schema } from "../schema/kinds.ts";
import type { ColumnInput, TableInput } from "./input.ts";
import { buildRecords } from "./records.ts";
import { buildSearchIndex } from "./search-index.ts";
import { type Partition, type Store, searchIndexColumns, searchableColumns } from "./types.ts";
import type { ColumnJob, ColumnBuilt } from "./column-worker.ts";

/** Named steps of a build, reported to a progress callback. */
export type BuildStep = "order" | "columns" | "records" | "search" | "done";

/**
 * The column that partitions the rows (docs/api.md "Any users table: the schema"): the first column in schema
 * order (not the key) of a kind whose values may partition them (kind.ts `partitionValues`: an
 * enum) holding between 2 and {@link MAX_PARTITION_VALUES} distinct values. A column of one value
 * partitions nothing; one of many values would split every posting list into many small groups
 * and every text column's order into many slices.
 * @returns the column id, or null when none qualifies
 */
export function choosePartition(columns: readonly ColumnInput[], key: string): string | null {
  for (const input of columns) {
    const distinctOf = KINDS[input.spec.kind].partitionValues;
    if (distinctOf === null || input.spec.id === key) continue;
    const d = distinctOf(input.values);
    if (d >= 2 && d <= MAX_PARTITION_VALUES) return input.spec.id;
  }
  return null;
}

/** The partition codes of a built enum column: its ranks as bytes, and the rows per rank. */
function partitionOf(column: StoredColumn): PartitionCodes {
  const ranks = column.rankByRow as Uint32Array;
  const starts = column.rankStarts as Uint32Array;
  const codes = new Uint8Array(ranks.length);
  for (let row = 0; row < ranks.length; row++) codes[row] = ranks[row];
  const counts = new Uint32Array(starts.length - 1);
  for (let r = 0; r < counts.length; r++) counts[r] = starts[r + 1] - starts[r];
  return { codes, counts };
}

/** One column built: the stored column and its literals in row order (for the records). */
interface Built {
  column: StoredColumn;
  literals: ByteColumn;
  /** The column's own 1- and 2-gram lists for the search index, when its build made them (search-index.ts `ownGramLists`). */
  grams?: readonly [TrigramIndex, TrigramIndex] | null;
}

/** Builds one column (what a worker runs too: store/column-worker.ts). */
export function buildColumn(spec: ColumnSpec, values: ColumnInput["values"], context: BuildContext): Built {
  const kind = KINDS[spec.kind];
  const column = kind.build(spec, values, context);
  const literals = kind.literals(spec, values);
  return { column, literals: context.order === null ? literals : gatherByteColumn(literals, context.order) };
}

/** What a build has decided before the columns are built: the row order, the partition, the schema. */
interface Prepared {
  rows: number;
  order: Uint32Array | null;
  schema: Schema;
  partition: { built: Built; codes: PartitionCodes } | null;
}

/**
 * Orders the rows by key, chooses the partition and builds its column.
 * @throws RangeError for a key column missing from the table, of a kind that cannot be the key, or with a duplicate value
 */
function prepare(input: TableInput): Prepared {
  const keyInput = input.columns.find((c) => c.spec.id === input.key);
  if (keyInput === undefined) throw new RangeError(`the key column "${input.key}" is not one of the table's columns`);
  const keyRole = KINDS[keyInput.spec.kind].key;
  if (keyRole === null) throw new RangeError(`the key column "${input.key}" is ${keyInput.spec.kind}; a key is a number or a text`);
  const order = keyRole.order(keyInput.values);
  const partitionId = choosePartition(input.columns, input.key);
  let partition: Prepared["partition"] = null;
  if (partitionId !== null) {
    const spec = (input.columns.find((c) => c.spec.id === partitionId) as ColumnInput).spec;
    const values = (input.columns.find((c) => c.spec.id === partitionId) as ColumnInput).values;
    const built = buildColumn(spec, values, { order, key: false, partition: null });
    partition = { built, codes: partitionOf(built.column) };
  }
  const schema: Schema = { columns: input.columns.map((c) => c.spec), key: input.key, partition: partitionId };
  return { rows: input.rows, order, schema, partition };
}

/** The store from its built columns (schema order), the records written from their literals. */
function finish(prepared: Prepared, built: Map<string, Built>, onStep?: (step: BuildStep) => void): Store {
  onStep?.("records");
  const columns = new Map<string, StoredColumn>();
  for (const spec of prepared.schema.columns) columns.set(spec.id, (built.get(spec.id) as Built).column);
  const records = buildRecords(
    prepared.schema.columns.map((spec) => ({ id: spec.id, literals: (built.get(spec.id) as Built).literals })),
    prepared.rows,
  );
  const partition: Partition | null =
    prepared.partition === null ? null : { column: prepared.schema.partition as string, codes: prepared.partition.codes.codes, counts: prepared.partition.codes.counts };
  onStep?.("search");
  const searchable = searchableColumns(columns, prepared.schema);
  const ready = new Map<string, readonly [TrigramIndex, TrigramIndex]>();
  for (const [id, b] of built) if (b.grams != null) ready.set(id, b.grams);
  const search = buildSearchIndex(searchIndexColumns(searchable), prepared.rows, prepared.partition?.codes ?? null, ready);
  onStep?.("done");
  return { rowCount: prepared.rows, schema: prepared.schema, columns, partition, searchable, search, records, snapshotId: "" };
}

/**
 * Builds a {@link Store} from a table on this thread: rows numbered in key order, every column
 * built by its kind (orders, ranks, folded bytes, posting lists, per-partition permutations),
 * every row's JSON record. `snapshotId` is left empty (the snapshot writer sets it). The store may
 * share the input's arrays.
 * @throws RangeError for a key that is missing, of another kind than number or text, or not
 *   unique (the sources check first), or a column or the records over 4 GiB
 */
export function buildStore(input: TableInput, onStep?: (step: BuildStep) => void): Store {
  onStep?.("order");
  const prepared = prepare(input);
  onStep?.("columns");
  const built = new Map<string, Built>();
  if (prepared.partition !== null) built.set(prepared.schema.partition as string, prepared.partition.built);
  for (const { spec, values } of input.columns) {
    if (built.has(spec.id)) continue;
    built.set(spec.id, buildColumn(spec, values, { order: prepared.order, key: spec.id === input.key, partition: prepared.partition?.codes ?? null }));
  }
  return finish(prepared, built, onStep);
}

/** Rows below which a build stays on this thread (starting workers costs more than it saves). */
const PARALLEL_FROM_ROWS = 1 << 16;

/** Workers a parallel build runs: the machines' two cores. */
const WORKERS = 2;

/**
 * Where the column worker is: beside this module when running from source; inside a compiled
 * binary (whose modules live under /$bunfs/root, the bundle root being src/), at its path
 * relative to that root, as scripts/build-binary.ts lists it as an entry point.
 */
function columnWorkerSpecifier(): string {
  if (import.meta.url.startsWith("file:///$bunfs/")) return "./store/column-worker.ts";
  return new URL("./column-worker.ts", import.meta.url).href;
}

/** A column's expected build work, to spread the columns over the workers (its kind's `buildWork`: text columns sort and index their bytes). */
function buildWork(input: ColumnInput): number {
  return KINDS[input.spec.kind].buildWork(input.values);
}

/** Every typed array's buffer in `value` (objects and arrays walked), for a transfer list. */
export function buffersOf(value: unknown, out: Set<ArrayBuffer> = new Set()): ArrayBuffer[] {
  if (ArrayBuffer.isView(value)) out.add(value.buffer as ArrayBuffer);
  else if (Array.isArray(value)) for (const v of value) buffersOf(v, out);
  else if (typeof value === "object" && value !== null) for (const v of Object.values(value)) buffersOf(v, out);
  return [...out];
}

/**
 * The same store as {@link buildStore}, with the columns built in {@link WORKERS} workers (the
 * heaviest first, each to the worker with the least work so far), so that the text columns'
 * sorts and posting lists run on both cores. The columns' arrays are transferred to the workers,
 * so they are detached from `input` here. Small tables are built on this thread.
 * @param parallelFromRows rows from which the workers build (default {@link PARALLEL_FROM_ROWS}; tests set 0)
 * @throws RangeError as {@link buildStore}; Error when a worker fails.
 */
export function buildStoreParallel(input: TableInput, onStep?: (step: BuildStep) => void, parallelFromRows = PARALLEL_FROM_ROWS): Promise<Store> {
  if (input.rows < parallelFromRows) {
    try {
      return Promise.resolve(buildStore(input, onStep));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  onStep?.("order");
  let prepared: Prepared;
  try {
    prepared = prepare(input);
  } catch (error) {
    return Promise.reject(error);
  }
  onStep?.("columns");
  const built = new Map<string, Built>();
  if (prepared.partition !== null) built.set(prepared.schema.partition as string, prepared.partition.built);
  const pending = input.columns.filter((c) => !built.has(c.spec.id)).sort((a, b) => buildWork(b) - buildWork(a));
  const shares: ColumnInput[][] = Array.from({ length: WORKERS }, () => []);
  const load = new Float64Array(WORKERS);
  for (const column of pending) {
    let w = 0;
    for (let i = 1; i < WORKERS; i++) if (load[i] < load[w]) w = i;
    shares[w].push(column);
    load[w] += buildWork(column);
  }
  const workers: Worker[] = [];
  const stop = () => {
    for (const worker of workers) worker.terminate();
  };
  // a buffer two workers' columns share (one null mask for several columns, say) is copied to
  // each rather than transferred: a transfer detaches it for the others
  const used = new Map<ArrayBuffer, number>();
  for (const share of shares) for (const buffer of buffersOf(share.map((c) => c.values))) used.set(buffer, (used.get(buffer) ?? 0) + 1);
  const jobs = shares
    .filter((share) => share.length > 0)
    .map(
      (share) =>
        new Promise<ColumnBuilt[]>((resolve, reject) => {
          const worker = new Worker(columnWorkerSpecifier());
          workers.push(worker);
          worker.onmessage = (event: MessageEvent<{ built?: ColumnBuilt[]; error?: string }>) => {
            if (event.data.built) resolve(event.data.built);
            else reject(new Error(`column worker failed: ${event.data.error}`));
          };
          worker.onerror = (event) => reject(new Error(`column worker failed: ${event.message}`));
          const job: ColumnJob = {
            rows: prepared.rows,
            columns: share.map((c) => ({ spec: c.spec, values: c.values, key: c.spec.id === input.key })),
            order: prepared.order?.slice() ?? null,
            partition: prepared.partition === null ? null : { codes: prepared.partition.codes.codes.slice(), counts: prepared.partition.codes.counts.slice() },
          };
          worker.postMessage(job, buffersOf(job).filter((buffer) => (used.get(buffer) ?? 0) <= 1));
        }),
    );
  return Promise.all(jobs)
    .then((results) => {
      for (const result of results) for (const b of result) built.set(b.column.spec.id, { column: b.column, literals: b.literals, grams: b.grams });
      return finish(prepared, built, onStep);
    })
    .finally(stop);
}
