/**
 * Change batches as published objects (docs/live-replicas.md §7, §8): where a batch lives under
 * a location, how the manifest lists it, and how a replica takes the batches after its version —
 * downloaded, checked against the manifest's size and SHA-256, decoded, applied in LSN order, each
 * once.
 */
import { createHash } from "node:crypto";
import { IoError } from "../files/errors.ts";
import { type ChangeBatch, decodeBatch, lsnValue } from "./changes.ts";

/** Where batch objects live under a location. */
export const CHANGES_PREFIX = "changes";

/** One published batch, as the manifest lists it after the snapshot it applies to. */
export interface BatchEntry {
  /** The object's key: `changes/<first LSN>-<last LSN>.ndjson` (LSN slashes as `-`). */
  key: string;
  /** The LSN of the first and of the last commit it holds (`X/Y`). */
  firstLsn: string;
  lsn: string;
  /** When its last transaction committed, ISO 8601. */
  commitTime: string;
  /** Changes it holds. */
  changes: number;
  /** Object size in bytes and SHA-256 (hex): what a replica checks. */
  bytes: number;
  sha256: string;
}

/** The object key of a batch from `firstLsn` to `lsn`. */
export function batchKey(firstLsn: string, lsn: string): string {
  return `${CHANGES_PREFIX}/${firstLsn.replace("/", "-")}-${lsn.replace("/", "-")}.ndjson`;
}

/** SHA-256 of bytes, hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The manifest's list of batches (its `changes` member), checked: entries of the right shape in
 * ascending LSN order. An absent list is none.
 * @throws Error naming the entry and what is wrong
 */
export function parseBatchEntries(value: unknown, where: string): BatchEntry[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Error(`${where}: "changes" is not a list`);
  let last = -1;
  return value.map((entry, i) => {
    const e = entry as Partial<BatchEntry> | null;
    const ok =
      e !== null &&
      typeof e === "object" &&
      typeof e.key === "string" &&
      typeof e.firstLsn === "string" &&
      typeof e.lsn === "string" &&
      typeof e.commitTime === "string" &&
      Number.isSafeInteger(e.changes) &&
      Number.isSafeInteger(e.bytes) &&
      typeof e.sha256 === "string" &&
      /^[0-9a-f]{64}$/.test(e.sha256);
    if (!ok) throw new Error(`${where}: changes[${i}] is not a batch entry`);
    const lsn = lsnValue((e as BatchEntry).lsn);
    if (lsn <= last) throw new Error(`${where}: changes[${i}] is not after the batch before it`);
    last = lsn;
    return e as BatchEntry;
  });
}

/** The entries after `lsn` (exclusive), in order: what a replica at `lsn` applies next. */
export function batchesAfter(entries: readonly BatchEntry[], lsn: string): BatchEntry[] {
  const at = lsnValue(lsn);
  return entries.filter((e) => lsnValue(e.lsn) > at);
}

/**
 * A downloaded batch object checked against its entry, and decoded.
 * @throws IoError `checksum` when the size or the SHA-256 differs from the manifest's; BatchError
 *   when the bytes are not a batch; Error when the batch's LSN is not the entry's
 */
export function checkedBatch(entry: BatchEntry, bytes: Uint8Array): ChangeBatch {
  if (bytes.length !== entry.bytes) throw new IoError("checksum", `${entry.key}: ${bytes.length} bytes, the manifest says ${entry.bytes}`);
  const sha256 = sha256Hex(bytes);
  if (sha256 !== entry.sha256) throw new IoError("checksum", `${entry.key}: SHA-256 ${sha256}, the manifest says ${entry.sha256}`);
  const batch = decodeBatch(bytes, entry.key);
  if (batch.lsn !== entry.lsn) throw new Error(`${entry.key}: the batch's LSN ${batch.lsn} is not the manifest's ${entry.lsn}`);
  return batch;
}
