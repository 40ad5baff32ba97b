/**
 * Why a file or storage operation failed, as a person reads it (the message names the location,
 * the operation and the cause) and as a program counts it (a reason from a short fixed list:
 * the `reason` label of the source metrics and the `reason` field of `/readyz`,
 * docs/operations.md "When things go wrong").
 */

/**
 * The reasons, bounded (metric label values):
 * - `timeout`: an operation made no progress within its time limit (a hung mount, an S3 endpoint
 *   that accepts connections and never answers);
 * - `hung`: too many earlier operations are still hung, so no other was started;
 * - `missing_location`: the source directory does not exist (removed, or not mounted);
 * - `not_published`: the location holds no manifest;
 * - `not_a_file`: a FIFO, socket, device or directory where a file was expected;
 * - `no_space`: the file system is full (ENOSPC, EDQUOT);
 * - `unreachable`: the S3 endpoint refused or dropped the connection, or its name does not resolve;
 * - `denied`: permissions (EACCES, EPERM, EROFS, S3 AccessDenied);
 * - `checksum`: a download's size or SHA-256 is not the manifest's;
 * - `refused`: the snapshot loader refused the file (corrupt, truncated, another format);
 * - `bad_manifest`: the manifest is not valid (ids, sizes, checksums);
 * - `io`: any other file system error;
 * - `storage`: any other S3 error.
 */
export const IO_REASONS = [
  "timeout",
  "hung",
  "missing_location",
  "not_published",
  "not_a_file",
  "no_space",
  "unreachable",
  "denied",
  "checksum",
  "refused",
  "bad_manifest",
  "io",
  "storage",
] as const;

/** One of {@link IO_REASONS}. */
export type IoReason = (typeof IO_REASONS)[number];

/** A failed file or storage operation: `message` names the location, the operation and the cause. */
export class IoError extends Error {
  /**
   * @param reason the cause, from {@link IO_REASONS}
   * @param message for a person: where, what, why (never a credential)
   */
  constructor(
    readonly reason: IoReason,
    message: string,
  ) {
    super(message);
    this.name = "IoError";
  }
}

/** Node's error codes of the file system, by reason. */
const ERRNO_REASONS: Record<string, IoReason> = {
  ENOSPC: "no_space",
  EDQUOT: "no_space",
  EFBIG: "no_space",
  EACCES: "denied",
  EPERM: "denied",
  EROFS: "denied",
};

/** What Node's error codes mean, in the words of a log line. */
const ERRNO_WORDS: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exhausted",
  EFBIG: "the file is too large for the file system",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "the file system is read-only",
  ENOENT: "no such file or directory",
  ENOTDIR: "a part of the path is not a directory",
  EISDIR: "it is a directory",
  EIO: "an input/output error of the device",
  EMFILE: "too many open files",
  ENFILE: "too many open files in the system",
  EXDEV: "not on the same file system",
};

/** The error code of a Node file system error (`ENOSPC`…), or undefined. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * A file system error as an {@link IoError} whose message says what was being done where:
 * `<what>: no space left on the device (ENOSPC)`. An IoError passes through unchanged.
 * @param what the operation and its path, e.g. "writing /var/cache/x.download"
 */
export function fileError(error: unknown, what: string): IoError {
  if (error instanceof IoError) return error;
  const code = errnoOf(error);
  const words = code === undefined ? (error as Error)?.message ?? String(error) : `${ERRNO_WORDS[code] ?? (error as Error).message} (${code})`;
  return new IoError((code !== undefined && ERRNO_REASONS[code]) || "io", `${what}: ${words}`);
}

/** The reason of any error: an IoError's own, `refused` for a refused snapshot, else `io`. */
export function reasonOf(error: unknown): IoReason {
  if (error instanceof IoError) return error.reason;
  if ((error as Error | null)?.name === "SnapshotError") return "refused";
  const code = errnoOf(error);
  return (code !== undefined && ERRNO_REASONS[code]) || "io";
}
