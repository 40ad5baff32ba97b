/**
 * Builds the store's typed arrays and every index from validated records: the work the
 * snapshot builder does once so that start-up and queries do none of it.
 */
import { STATUS_VALUES, type UserRecord, statusCode } from "../schema.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import type { ConvertedColumn } from "../kinds/convert.ts";
import { type ByteColumn, gatherByteColumn, packStrings } from "../bits/byte-column.ts";
import type { ColumnJob, ExtraColumnsJob } from "./column-worker.ts";
import { type ExtraColumnsBuilt, buffersOf, buildExtraColumns } from "./extra-columns.ts";
import { PARTITION_COLUMN, SEED_COLUMNS, type Schema } from "../schema/kinds.ts";
import { buildRecords } from "./records.ts";
import { type BuiltStringColumn, buildStringColumn } from "./string-column.ts";
import { buildIdTrigrams } from "./trigrams.ts";
import type { Store, TrigramIndex } from "./types.ts";

/**
 * Validated columns in input order (what the ingest readers produce); all of length n. A build
 * takes them over: the store may share these arrays (when the ids are already ascending), and
 * {@link buildStoreParallel} transfers the email bytes to its worker (detaching them here).
 */
export interface InputColumns {
  /** Unique finite ids. */
  ids: Float64Array;
  /** Names as well-formed UTF-8, packed; n values. */
  names: ByteColumn;
  /** Emails as well-formed UTF-8, packed; n values. */
  emails: ByteColumn;
  /** Status codes (indexes into STATUS_VALUES). */
  statusCodes: Uint8Array;
  /**
   * The columns beyond the seed's four, in schema order, each converted to its kind's typed
   * form in input order (ingest/raw-column.ts `convertColumn`; n rows each). Absent or empty:
   * the seed's four alone. An enum's spec lists its values (declared, or inferred in collation order).
   */
  extra?: ExtraInput[];
}

/** One column beyond the seed's four, as a build takes it: its spec and its values in input order. */
export interface ExtraInput {
  spec: ColumnSpec;
  column: ConvertedColumn;
}

/** Named steps of a build, reported to a progress callback. */
export type BuildStep = "order" | "name" | "email" | "columns" | "records" | "done";

/** The store without its string columns, and those columns' values in row order. */
interface Prepared {
  base: Omit<Store, "strings" | "records" | "idTrigrams">;
  names: ByteColumn;
  emails: ByteColumn;
  /** Store row → input position, or null when input order is row order. */
  byId: Uint32Array | null;
  /** The input's columns beyond the seed's four (input order). */
  extra: ExtraInput[];
}

/**
 * Reorders rows by id and builds the id and status arrays. Input already in id order (the
 * generator's, and most files) is used as is, without a copy.
 */
function prepare(input: InputColumns): Prepared {
  const n = input.ids.length;
  const byId = orderById(input.ids);
  let { ids, statusCodes, names, emails } = input;
  if (byId !== null) {
    ids = new Float64Array(n);
    statusCodes = new Uint8Array(n);
    for (let row = 0; row < n; row++) {
      const src = byId[row];
      ids[row] = input.ids[src];
      statusCodes[row] = input.statusCodes[src];
      if (row > 0 && ids[row] === ids[row - 1]) throw new RangeError(`duplicate id ${ids[row]}`);
    }
    names = gatherByteColumn(input.names, byId);
    emails = gatherByteColumn(input.emails, byId);
  }
  const statusCounts = new Uint32Array(STATUS_VALUES.length);
  for (let row = 0; row < n; row++) statusCounts[statusCodes[row]]++;
  const rowsByStatus = rowsGroupedByStatus(statusCodes, statusCounts);
  const rowsByAbsId = n > 0 && ids[0] < 0 ? orderByAbsId(ids) : null;
  const extra = input.extra ?? [];
  const schema: Schema = { columns: [...SEED_COLUMNS, ...extra.map((e) => e.spec)], partition: PARTITION_COLUMN };
  return {
    base: { rowCount: n, ids, statusCodes, statusCounts, rowsByStatus, rowsByAbsId, schema, columns: {}, snapshotId: "" },
    names,
    emails,
    byId,
    extra,
  };
}

/**
 * Builds a {@link Store} from input columns on this thread: rows reordered by ascending id,
 * string columns folded, collation permutations, ranks, per-status permutations and trigram
 * indexes, and every row's JSON record. `snapshotId` is left empty (the snapshot
 * writer sets it). The store may share the input's arrays.
 * @throws RangeError on duplicate ids (the readers reject them first), or a column or the records over 4 GiB.
 */
export function buildStore(input: InputColumns, onStep?: (step: BuildStep) => void): Store {
  onStep?.("order");
  const prepared = prepare(input);
  const { base, names, emails } = prepared;
  onStep?.("name");
  const name = buildStringColumn(names, base.statusCodes, base.statusCounts);
  onStep?.("email");
  const email = buildStringColumn(emails, base.statusCodes, base.statusCounts);
  const extra = buildExtraColumns(prepared.extra, prepared.byId, base.statusCodes, () => onStep?.("columns"));
  const idTrigrams = buildIdTrigrams(base.ids, base.statusCodes);
  return finish(prepared, name, email, idTrigrams, extra, onStep);
}

/** Joins the parts of a build: the columns beyond the four, the records from the columns' literals, then the store. */
function finish(prepared: Prepared, name: BuiltStringColumn, email: BuiltStringColumn, idTrigrams: TrigramIndex, extra: ExtraColumnsBuilt, onStep?: (step: BuildStep) => void): Store {
  const base = prepared.base;
  base.columns = extra.columns;
  const fields = extra.fields;
  onStep?.("records");
  const records = buildRecords(base.ids, base.statusCodes, name.literals, email.literals, undefined, fields);
  onStep?.("done");
  return { ...base, idTrigrams, records, strings: { name: name.column, email: email.column } };
}

/**
 * Where the column worker is: beside this module when running from source; inside a compiled
 * binary (whose modules live under /$bunfs/root, the bundle root being src/), at its path
 * relative to that root, as scripts/build-binary.ts lists it as an entry point.
 */
function columnWorkerSpecifier(): string {
  if (import.meta.url.startsWith("file:///$bunfs/")) return "./store/column-worker.ts";
  return new URL("./column-worker.ts", import.meta.url).href;
}

/**
 * The same store as {@link buildStore}, with the email column built in a worker while this
 * thread builds the name column (the two heaviest steps, on two cores), and the columns beyond
 * the four, when there are any, in a second worker meanwhile (the system shares the two cores
 * among the three). The email bytes and offsets (the input's own when the ids are already
 * ascending) and the added columns' arrays are transferred to the workers, so they are detached
 * from `input` here and must not share a buffer with the other columns.
 * @throws RangeError as {@link buildStore}; Error when the worker fails.
 */
export function buildStoreParallel(input: InputColumns, onStep?: (step: BuildStep) => void): Promise<Store> {
  // Not an async function: nothing here keeps `input` alive while the worker finishes.
  onStep?.("order");
  let prepared: Prepared;
  try {
    prepared = prepare(input);
  } catch (error) {
    return Promise.reject(error);
  }
  const { base, names, emails } = prepared;
  const worker = new Worker(columnWorkerSpecifier());
  const emailColumn = new Promise<BuiltStringColumn>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ built?: BuiltStringColumn; error?: string }>) => {
      if (event.data.built) resolve(event.data.built);
      else reject(new Error(`email column worker failed: ${event.data.error}`));
    };
    worker.onerror = (event) => reject(new Error(`email column worker failed: ${event.message}`));
  });
  const job: ColumnJob = { bytes: emails.bytes, offsets: emails.offsets, statusCodes: base.statusCodes.slice(), statusCounts: base.statusCounts.slice() };
  worker.postMessage(job, [job.bytes.buffer as ArrayBuffer, job.offsets.buffer as ArrayBuffer, job.statusCodes.buffer as ArrayBuffer]);
  const extraWorker = prepared.extra.length > 0 ? new Worker(columnWorkerSpecifier()) : null;
  const extraColumns = new Promise<ExtraColumnsBuilt>((resolve, reject) => {
    if (extraWorker === null) return resolve({ columns: {}, fields: [] });
    extraWorker.onmessage = (event: MessageEvent<{ extra?: ExtraColumnsBuilt; error?: string }>) => {
      if (event.data.extra) resolve(event.data.extra);
      else reject(new Error(`added columns worker failed: ${event.data.error}`));
    };
    extraWorker.onerror = (event) => reject(new Error(`added columns worker failed: ${event.message}`));
    onStep?.("columns");
    const extraJob: ExtraColumnsJob = { extra: prepared.extra, byId: prepared.byId?.slice() ?? null, statusCodes: base.statusCodes.slice() };
    extraWorker.postMessage(extraJob, buffersOf(extraJob));
  });
  const stop = () => {
    worker.terminate();
    extraWorker?.terminate();
  };
  onStep?.("name");
  let name: BuiltStringColumn;
  let idTrigrams: TrigramIndex;
  try {
    name = buildStringColumn(names, base.statusCodes, base.statusCounts);
    idTrigrams = buildIdTrigrams(base.ids, base.statusCodes);
  } catch (error) {
    stop();
    return Promise.reject(error);
  }
  onStep?.("email");
  return Promise.all([emailColumn, extraColumns])
    .then(([email, extra]) => finish(prepared, name, email, idTrigrams, extra, onStep))
    .finally(stop);
}

/**
 * Convenience for tests and the default data: builds a store from records.
 * @throws RangeError on a status outside STATUS_VALUES, a name or email that is not
 *   well-formed Unicode (a lone surrogate), or as {@link buildStore}
 */
export function buildStoreFromRecords(records: readonly UserRecord[]): Store {
  const n = records.length;
  const ids = new Float64Array(n);
  const statusCodes = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const r = records[i];
    ids[i] = r.id;
    const code = statusCode(r.status);
    if (code < 0) throw new RangeError(`status must be one of ${STATUS_VALUES.join(", ")} (got "${r.status}")`);
    if (!r.name.isWellFormed() || !r.email.isWellFormed()) throw new RangeError(`record ${r.id}: name and email must be well-formed Unicode`);
    statusCodes[i] = code;
  }
  const names = packStrings(n, (i) => records[i].name);
  const emails = packStrings(n, (i) => records[i].email);
  return buildStore({ ids, names, emails, statusCodes });
}

/** Row numbers 0…n-1 grouped by status code, ascending within a group. */
function rowsGroupedByStatus(statusCodes: Uint8Array, statusCounts: Uint32Array): Uint32Array {
  const rows = new Uint32Array(statusCodes.length);
  const cursor = new Uint32Array(statusCounts.length);
  for (let code = 1; code < cursor.length; code++) cursor[code] = cursor[code - 1] + statusCounts[code - 1];
  for (let row = 0; row < statusCodes.length; row++) rows[cursor[statusCodes[row]]++] = row;
  return rows;
}

/** The identity permutation 0…n-1. */
function identity(n: number): Uint32Array {
  const rows = new Uint32Array(n);
  for (let i = 0; i < n; i++) rows[i] = i;
  return rows;
}

/**
 * Permutation of input positions by ascending id (ids unique, so no ties), or null when the ids
 * already ascend (the generator's, and most files: the identity). Otherwise a native numeric
 * sort of a copy, then each input position is placed by binary search: O(n log n) without a
 * comparator callback.
 */
function orderById(ids: Float64Array): Uint32Array | null {
  const n = ids.length;
  let sorted = true;
  for (let i = 1; i < n; i++) {
    if (!(ids[i - 1] < ids[i])) {
      sorted = false;
      break;
    }
  }
  if (sorted) return null;
  const keys = ids.slice().sort();
  for (let i = 1; i < n; i++) if (keys[i] === keys[i - 1]) throw new RangeError(`duplicate id ${keys[i]}`);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const x = ids[i];
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    order[lo] = i;
  }
  return order;
}

/** Rows by ascending |id|, ties (x and -x) by signed id ascending. */
function orderByAbsId(ids: Float64Array): Uint32Array {
  const rows = Array.from(identity(ids.length));
  rows.sort((a, b) => Math.abs(ids[a]) - Math.abs(ids[b]) || a - b);
  return Uint32Array.from(rows);
}
