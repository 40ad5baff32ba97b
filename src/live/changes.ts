/**
 * Changes and change batches (docs/live-replicas.md §2, "Live replicas" in docs/api.md): what a
 * publisher following PostgreSQL's logical replication writes under `changes/`, and what a
 * replica applies to its snapshot. A batch holds the changes of one or more whole transactions
 * in commit order; its object is NDJSON: a header line, then one line per change.
 *
 * ```
 * {"batch":1,"lsn":"0/16B3748","commitTime":"2026-11-26T10:00:00.000Z","changes":2}
 * {"op":"upsert","record":{"id":7,"title":"Ada",…}}
 * {"op":"delete","key":12}
 * ```
 */

/** One row change: the whole new record of an inserted or updated row, or the key of a deleted one. */
export type Change = { op: "upsert"; record: Record<string, unknown> } | { op: "delete"; key: number | string };

/** A batch of changes: whole transactions in commit order, and the LSN and time of the last commit. */
export interface ChangeBatch {
  /** PostgreSQL's log sequence number of the batch's last commit, `XXXXXXXX/XXXXXXXX` (hex). */
  lsn: string;
  /** When the batch's last transaction committed, in UTC milliseconds since the epoch. */
  commitTime: number;
  /** The changes in commit order; an update of the key is a delete of the old key, then an upsert. */
  changes: Change[];
}

/** The format version written in a batch's header line. */
export const BATCH_FORMAT = 1;

/** A batch object that does not parse: the line (1-based) and the reason. */
export class BatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BatchError";
  }
}

const LSN = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

/**
 * An LSN as a number (high 32 bits · 2^32 + low 32 bits): exact below 2^53, which a log position
 * reaches after 8 PiB of WAL.
 * @throws BatchError for a string that is not `X/Y` with 1–8 hex digits each
 */
export function lsnValue(lsn: string): number {
  const m = LSN.exec(lsn);
  if (m === null) throw new BatchError(`"${lsn}" is not an LSN (XXXXXXXX/XXXXXXXX, hex)`);
  return Number.parseInt(m[1], 16) * 2 ** 32 + Number.parseInt(m[2], 16);
}

/** The LSN string of a position (as PostgreSQL prints it: upper-case hex, no leading zeros). */
export function lsnText(value: number): string {
  const hi = Math.floor(value / 2 ** 32);
  const lo = value - hi * 2 ** 32;
  return `${hi.toString(16).toUpperCase()}/${lo.toString(16).toUpperCase()}`;
}

/** Compares two LSNs: negative, zero or positive as `a` is before, at or after `b`. */
export function compareLsn(a: string, b: string): number {
  return lsnValue(a) - lsnValue(b);
}

const encoder = new TextEncoder();

/** A batch as its object's bytes (NDJSON: the header line, then a line per change). */
export function encodeBatch(batch: ChangeBatch): Uint8Array {
  const lines = [JSON.stringify({ batch: BATCH_FORMAT, lsn: batch.lsn, commitTime: new Date(batch.commitTime).toISOString(), changes: batch.changes.length })];
  for (const change of batch.changes) lines.push(JSON.stringify(change));
  return encoder.encode(`${lines.join("\n")}\n`);
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The batch in an object's bytes (see the module comment), checked line by line.
 * @param name the object's name, for messages
 * @throws BatchError `name:line: reason` for bytes that are not a batch: bad UTF-8 or JSON, a
 *   header of another format version, a change that is neither an upsert of an object nor a
 *   delete of a number or string key, a change count that differs from the header's
 */
export function decodeBatch(bytes: Uint8Array, name: string): ChangeBatch {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new BatchError(`${name}: not UTF-8`);
  }
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const fail = (line: number, reason: string): never => {
    throw new BatchError(`${name}:${line}: ${reason}`);
  };
  const parse = (line: number): unknown => {
    try {
      return JSON.parse(lines[line - 1]);
    } catch (error) {
      return fail(line, `not JSON (${(error as Error).message})`);
    }
  };
  if (lines.length === 0) fail(1, "empty (a batch starts with its header line)");
  const header = parse(1) as { batch?: unknown; lsn?: unknown; commitTime?: unknown; changes?: unknown } | null;
  if (header === null || typeof header !== "object") return fail(1, "the header is not an object");
  if (header.batch !== BATCH_FORMAT) fail(1, `batch format ${JSON.stringify(header.batch)} (this replica reads ${BATCH_FORMAT})`);
  if (typeof header.lsn !== "string" || !LSN.test(header.lsn)) fail(1, `"lsn" ${JSON.stringify(header.lsn)} is not an LSN`);
  const commitTime = typeof header.commitTime === "string" ? Date.parse(header.commitTime) : Number.NaN;
  if (Number.isNaN(commitTime)) fail(1, `"commitTime" ${JSON.stringify(header.commitTime)} is not an ISO date-time`);
  if (typeof header.changes !== "number" || !Number.isSafeInteger(header.changes) || header.changes < 0) fail(1, `"changes" ${JSON.stringify(header.changes)} is not a count`);
  if (header.changes !== lines.length - 1) fail(lines.length, `the header counts ${header.changes} changes, the object holds ${lines.length - 1} (truncated?)`);
  const changes: Change[] = [];
  for (let line = 2; line <= lines.length; line++) {
    const change = parse(line) as { op?: unknown; record?: unknown; key?: unknown } | null;
    if (change === null || typeof change !== "object") fail(line, "a change is an object");
    else if (change.op === "upsert") {
      const record = change.record;
      if (record === null || typeof record !== "object" || Array.isArray(record)) fail(line, "an upsert's record is an object");
      changes.push({ op: "upsert", record: record as Record<string, unknown> });
    } else if (change.op === "delete") {
      const key = change.key;
      if (typeof key !== "number" && typeof key !== "string") fail(line, "a delete's key is a number or a string");
      changes.push({ op: "delete", key: key as number | string });
    } else fail(line, `op ${JSON.stringify(change.op)} (expected "upsert" or "delete")`);
  }
  return { lsn: header.lsn as string, commitTime, changes };
}
