/**
 * Builds the store's typed arrays and every index from validated records: the work the
 * snapshot builder does once so that start-up and queries do none of it.
 */
import { fold } from "../collation/collation.ts";
import { sortByCollation } from "../collation/sort.ts";
import { STATUS_VALUES, type StringColumnId, type UserRecord, statusCode } from "../schema.ts";
import { packJsonStrings, packStrings } from "./byte-column.ts";
import { buildTrigramIndex } from "./trigrams.ts";
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

/**
 * Builds a {@link Store} from input columns: rows reordered by ascending id, string columns
 * packed as JSON literals and folded UTF-8, collation permutations, ranks, per-status
 * permutations and trigram indexes. `snapshotId` is left empty (the snapshot writer sets it).
 * @throws RangeError on duplicate ids (the readers reject them first) or a column over 4 GiB.
 */
export function buildStore(input: InputColumns, onStep?: (step: BuildStep) => void): Store {
  const n = input.ids.length;
  onStep?.("order");
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

  onStep?.("status");
  const statusCounts = new Uint32Array(STATUS_VALUES.length);
  for (let row = 0; row < n; row++) statusCounts[statusCodes[row]]++;
  const rowsByStatus = partitionByStatus(identity(n), statusCodes, statusCounts);

  let rowsByAbsId: Uint32Array | null = null;
  if (n > 0 && ids[0] < 0) rowsByAbsId = orderByAbsId(ids);

  onStep?.("name");
  const name = buildStringColumn(names, statusCodes, statusCounts);
  onStep?.("email");
  const email = buildStringColumn(emails, statusCodes, statusCounts);
  onStep?.("done");
  const strings: Record<StringColumnId, StringColumn> = { name, email };
  return { rowCount: n, ids, statusCodes, statusCounts, rowsByStatus, rowsByAbsId, strings, snapshotId: "" };
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

/** Permutation of input positions by ascending id (ids unique, so no ties). */
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
  // Sort (id, position) pairs through a Float64 copy of ids and an index permutation.
  const order = identity(n);
  const keys = ids;
  const tmp = Array.from(order);
  tmp.sort((a, b) => keys[a] - keys[b] || a - b);
  for (let i = 0; i < n; i++) order[i] = tmp[i];
  return order;
}

/** Rows by ascending |id|, ties (x and -x) by signed id ascending. */
function orderByAbsId(ids: Float64Array): Uint32Array {
  const rows = Array.from(identity(ids.length));
  rows.sort((a, b) => Math.abs(ids[a]) - Math.abs(ids[b]) || a - b);
  return Uint32Array.from(rows);
}

/** Stable partition of a permutation by status code: status 0's rows first, then 1's. */
function partitionByStatus(rows: Uint32Array, statusCodes: Uint8Array, statusCounts: Uint32Array): Uint32Array {
  const out = new Uint32Array(rows.length);
  const cursor = new Uint32Array(statusCounts.length);
  for (let code = 1; code < cursor.length; code++) cursor[code] = cursor[code - 1] + statusCounts[code - 1];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    out[cursor[statusCodes[row]]++] = row;
  }
  return out;
}

/** Builds one string column (values in row order). */
function buildStringColumn(values: string[], statusCodes: Uint8Array, statusCounts: Uint32Array): StringColumn {
  const n = values.length;
  const json = packJsonStrings(n, (i) => values[i]);
  const folded = packStrings(n, (i) => fold(values[i]));
  const { order, ranks } = sortByCollation(values);
  const rowsByValueByStatus = partitionByStatus(order, statusCodes, statusCounts);
  const trigrams = buildTrigramIndex(folded.bytes, folded.offsets, n);
  return {
    json: json.bytes,
    jsonOffsets: json.offsets,
    folded: folded.bytes,
    foldedOffsets: folded.offsets,
    rowsByValue: order,
    rankByRow: ranks,
    rowsByValueByStatus,
    trigrams,
  };
}
