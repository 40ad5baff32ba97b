/**
 * Builds the store's typed arrays and every index from validated records: the work the
 * snapshot builder does once so that start-up and queries do none of it.
 */
import { STATUS_VALUES, type StringColumnId, type UserRecord, statusCode } from "../schema.ts";
import { packStrings } from "./byte-column.ts";
import type { ColumnJob } from "./column-worker.ts";
import { buildStringColumn, partitionByStatus } from "./string-column.ts";
import type { Store, StringColumn } from "./types.ts";

/** Validated columns in input order (what the ingest readers produce); all of length n. */
export interface InputColumns {
  /** Unique finite ids. */
  ids: Float64Array;
  names: readonly string[];
  emails: readonly string[];
  /** Status codes (indexes into STATUS_VALUES). */
  statusCodes: Uint8Array;
}

/** Named steps of a build, reported to a progress callback. */
export type BuildStep = "order" | "name" | "email" | "status" | "done";

/** The store without its string columns, and those columns' values in row order. */
interface Prepared {
  base: Omit<Store, "strings">;
  names: string[];
  emails: string[];
}

/** Reorders rows by id and builds the id and status arrays. */
function prepare(input: InputColumns): Prepared {
  const n = input.ids.length;
  const byId = orderById(input.ids);
  const ids = new Float64Array(n);
  const statusCodes = new Uint8Array(n);
  const names: string[] = new Array(n);
  const emails: string[] = new Array(n);
  for (let row = 0; row < n; row++) {
    const src = byId[row];
    ids[row] = input.ids[src];
    statusCodes[row] = input.statusCodes[src];
    names[row] = input.names[src];
    emails[row] = input.emails[src];
    if (row > 0 && ids[row] === ids[row - 1]) throw new RangeError(`duplicate id ${ids[row]}`);
  }
  const statusCounts = new Uint32Array(STATUS_VALUES.length);
  for (let row = 0; row < n; row++) statusCounts[statusCodes[row]]++;
  const rowsByStatus = partitionByStatus(identity(n), statusCodes, statusCounts);
  const rowsByAbsId = n > 0 && ids[0] < 0 ? orderByAbsId(ids) : null;
  return { base: { rowCount: n, ids, statusCodes, statusCounts, rowsByStatus, rowsByAbsId, snapshotId: "" }, names, emails };
}

/**
 * Builds a {@link Store} from input columns on this thread: rows reordered by ascending id,
 * string columns packed as JSON literals and folded UTF-8, collation permutations, ranks,
 * per-status permutations and trigram indexes. `snapshotId` is left empty (the snapshot
 * writer sets it).
 * @throws RangeError on duplicate ids (the readers reject them first) or a column over 4 GiB.
 */
export function buildStore(input: InputColumns, onStep?: (step: BuildStep) => void): Store {
  onStep?.("order");
  const { base, names, emails } = prepare(input);
  onStep?.("name");
  const name = buildStringColumn(names, base.statusCodes, base.statusCounts);
  onStep?.("email");
  const email = buildStringColumn(emails, base.statusCodes, base.statusCounts);
  onStep?.("done");
  return { ...base, strings: { name, email } };
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
 * thread builds the name column (the two heaviest steps, on two cores).
 * @throws RangeError as {@link buildStore}; Error when the worker fails.
 */
export async function buildStoreParallel(input: InputColumns, onStep?: (step: BuildStep) => void): Promise<Store> {
  onStep?.("order");
  const { base, names, emails } = prepare(input);
  const packed = packStrings(emails.length, (i) => emails[i]);
  const worker = new Worker(columnWorkerSpecifier());
  const emailColumn = new Promise<StringColumn>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ column?: StringColumn; error?: string }>) => {
      if (event.data.column) resolve(event.data.column);
      else reject(new Error(`email column worker failed: ${event.data.error}`));
    };
    worker.onerror = (event) => reject(new Error(`email column worker failed: ${event.message}`));
  });
  const job: ColumnJob = { bytes: packed.bytes, offsets: packed.offsets, statusCodes: base.statusCodes.slice(), statusCounts: base.statusCounts.slice() };
  worker.postMessage(job, [job.bytes.buffer as ArrayBuffer, job.offsets.buffer as ArrayBuffer, job.statusCodes.buffer as ArrayBuffer]);
  onStep?.("name");
  try {
    const name = buildStringColumn(names, base.statusCodes, base.statusCounts);
    onStep?.("email");
    const email = await emailColumn;
    onStep?.("done");
    const strings: Record<StringColumnId, StringColumn> = { name, email };
    return { ...base, strings };
  } finally {
    worker.terminate();
  }
}

/** Convenience for tests and the default data: builds a store from records. */
export function buildStoreFromRecords(records: readonly UserRecord[]): Store {
  const n = records.length;
  const ids = new Float64Array(n);
  const statusCodes = new Uint8Array(n);
  const names: string[] = new Array(n);
  const emails: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const r = records[i];
    ids[i] = r.id;
    names[i] = r.name;
    emails[i] = r.email;
    const code = statusCode(r.status);
    if (code < 0) throw new RangeError(`status must be one of ${STATUS_VALUES.join(", ")} (got "${r.status}")`);
    statusCodes[i] = code;
  }
  return buildStore({ ids, names, emails, statusCodes });
}

/** The identity permutation 0…n-1. */
function identity(n: number): Uint32Array {
  const rows = new Uint32Array(n);
  for (let i = 0; i < n; i++) rows[i] = i;
  return rows;
}

/**
 * Permutation of input positions by ascending id (ids unique, so no ties). Sorted input (the
 * generator's) is the identity; otherwise a native numeric sort of a copy, then each input
 * position is placed by binary search: O(n log n) without a comparator callback.
 */
function orderById(ids: Float64Array): Uint32Array {
  const n = ids.length;
  let sorted = true;
  for (let i = 1; i < n; i++) {
    if (!(ids[i - 1] < ids[i])) {
      sorted = false;
      break;
    }
  }
  if (sorted) return identity(n);
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
