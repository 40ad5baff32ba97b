/**
 * Where published snapshots live: a shared directory or an S3-compatible bucket under a prefix,
 * behind one small interface (objects by key, a manifest replaced atomically). S3 goes through
 * Bun's built-in client, configured from the standard environment variables (S3_ENDPOINT or
 * AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION; S3_* spellings too).
 *
 * The directory storage does blocking file I/O, and Bun's S3 client has no time limit: the
 * server runs every storage operation on an I/O thread with a watchdog (io/threads.ts
 * `remoteStorage`), so a hung mount or endpoint holds that thread, never the server. Every
 * failure is an {@link IoError} whose message names the location (for S3, the endpoint too,
 * never a credential), the operation and the cause; a failed write leaves no partial file.
 */
import { createHash } from "node:crypto";
import { type Stats, closeSync, constants, mkdirSync, openSync, readSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { IoError, fileError } from "../files/errors.ts";
import { SLICE_BYTES, copyInSlices, ensureSpace, fileKind, isMissing, openRegular, readInSlices, readRegular, removeQuietly, writeAll } from "../files/blocking.ts";

/** Largest object {@link ObjectStorage.read} returns whole, in bytes (a manifest is a few KiB). */
export const MAX_READ_BYTES = 1 << 30;

/** An object's size and SHA-256 (hex), as read or written. */
export interface ObjectDigest {
  bytes: number;
  sha256: string;
}

/** Objects under one location (a directory, or a bucket and prefix). Keys use `/`. */
export interface ObjectStorage {
  /** The location as the user gave it (a directory resolved to an absolute path). */
  readonly location: string;
  /** The location for messages: for S3 with its endpoint (never a credential). */
  readonly description: string;
  /**
   * An object's bytes (at most {@link MAX_READ_BYTES}), or null when it does not exist.
   * @throws IoError `missing_location` when the directory itself does not exist
   */
  read(key: string): Promise<Uint8Array | null>;
  /** An object's size in bytes, or null when it (or the directory) does not exist. */
  size(key: string): Promise<number | null>;
  /**
   * Writes an object from a local file, in slices (`onProgress` gets the bytes sent so far);
   * a directory's object is written to a temporary name, flushed and renamed (a failure
   * removes the temporary file).
   */
  upload(key: string, file: string, onProgress?: (bytes: number) => void): Promise<void>;
  /**
   * Writes a small object so that readers see the old or the new content, never a part: a
   * rename in a directory, one PUT in S3.
   */
  replace(key: string, bytes: Uint8Array): Promise<void>;
  /** Keys under `prefix` (relative to the location); none when the directory does not exist. */
  list(prefix: string): Promise<string[]>;
  /** Removes an object (nothing when it does not exist). */
  remove(key: string): Promise<void>;
  /**
   * Streams an object into the new local file `file`, hashing it on the way; the partial file
   * is removed on any failure.
   * @param options.expectedBytes the size the caller expects: refused at once with `no_space`
   *   when the local file system has less free space
   * @throws IoError `io` when the object does not exist; `no_space`; the storage's errors
   */
  download(key: string, file: string, options?: { expectedBytes?: number; onProgress?: (bytes: number) => void }): Promise<ObjectDigest>;
  /** An object's size and SHA-256 read back from the storage, or null when it does not exist. */
  digest(key: string, onProgress?: (bytes: number) => void): Promise<ObjectDigest | null>;
}

/**
 * The storage of `location`: `s3://bucket/prefix` or a directory path.
 * @throws Error for an S3 location without a bucket
 */
export function openStorage(location: string): ObjectStorage {
  if (location.startsWith("s3://")) {
    const rest = location.slice(5);
    const slash = rest.indexOf("/");
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    const prefix = slash < 0 ? "" : rest.slice(slash + 1).replace(/\/+$/, "");
    if (bucket === "") throw new Error(`${location}: no bucket (s3://bucket/prefix)`);
    return s3Storage(location, bucket, prefix);
  }
  return dirStorage(resolve(location));
}

/**
 * How a location is named in messages: a directory as it is; S3 with its endpoint, without any
 * user or password in the endpoint URL.
 */
export function describeLocation(location: string): string {
  if (!location.startsWith("s3://")) return resolve(location);
  return `${location} (endpoint ${s3Endpoint() ?? "the default AWS endpoint"})`;
}

/** The configured S3 endpoint, with any credentials in its URL removed, or undefined. */
function s3Endpoint(): string | undefined {
  const raw = process.env.S3_ENDPOINT ?? process.env.AWS_ENDPOINT_URL;
  if (raw === undefined || raw === "") return undefined;
  try {
    const url = new URL(raw);
    url.username = "";
    url.password = "";
    return url.href.replace(/\/$/, "");
  } catch {
    return "(an endpoint that is not a URL)";
  }
}

/** SHA-256 of slices, with the byte count. */
function hasher() {
  const hash = createHash("sha256");
  let bytes = 0;
  return {
    update(slice: Uint8Array) {
      hash.update(slice);
      bytes += slice.length;
    },
    digest: (): ObjectDigest => ({ bytes, sha256: hash.digest("hex") }),
  };
}

/** A shared directory: objects are files; writes go to a temporary name, flushed, then renamed. */
function dirStorage(root: string): ObjectStorage {
  const path = (key: string) => join(root, ...key.split("/"));
  /** Throws when the directory itself is gone: "nothing published" must not hide an unmounted share. */
  const checkRoot = () => {
    let stats: Stats;
    try {
      stats = statSync(root);
    } catch (error) {
      if (isMissing(error)) throw new IoError("missing_location", `${root}: the directory does not exist (removed, renamed, or not mounted)`);
      throw fileError(error, `reading the directory ${root}`);
    }
    if (!stats.isDirectory()) throw new IoError("not_a_file", `${root} is ${fileKind(stats)}, not a directory`);
  };
  const writeTemporary = (target: string, write: (temporary: string) => void) => {
    try {
      mkdirSync(dirname(target), { recursive: true });
    } catch (error) {
      throw fileError(error, `creating the directory ${dirname(target)}`);
    }
    const temporary = `${target}.${process.pid}.tmp`;
    removeQuietly(temporary);
    try {
      write(temporary);
      renameSync(temporary, target);
    } catch (error) {
      removeQuietly(temporary);
      throw fileError(error, `writing ${target}`);
    }
  };
  const readSlices = (file: string, onSlice: (slice: Uint8Array) => void, onProgress?: (bytes: number) => void): boolean => {
    let opened: { fd: number; stats: Stats };
    try {
      opened = openRegular(file);
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    const { fd, stats } = opened;
    try {
      readInSlices(fd, stats.size, onSlice, onProgress);
    } catch (error) {
      throw fileError(error, `reading ${file}`);
    } finally {
      closeSync(fd);
    }
    return true;
  };
  return {
    location: root,
    description: root,
    async read(key) {
      const bytes = readRegular(path(key), MAX_READ_BYTES);
      if (bytes === null) checkRoot();
      return bytes;
    },
    async size(key) {
      try {
        const stats = statSync(path(key));
        if (!stats.isFile()) throw new IoError("not_a_file", `${path(key)} is ${fileKind(stats)}, not a regular file`);
        return stats.size;
      } catch (error) {
        if (!isMissing(error)) throw fileError(error, `reading the attributes of ${path(key)}`);
        return null;
      }
    },
    async upload(key, file, onProgress) {
      const { fd, stats } = openRegular(file);
      try {
        writeTemporary(path(key), (temporary) => copyInSlices({ fd, path: file }, stats.size, temporary, { onProgress, sync: true }));
      } finally {
        closeSync(fd);
      }
    },
    async replace(key, bytes) {
      writeTemporary(path(key), (temporary) => {
        const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o644);
        try {
          writeAll(fd, bytes);
        } finally {
          closeSync(fd);
        }
      });
    },
    async list(prefix) {
      const dir = path(prefix);
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch (error) {
        if (!isMissing(error)) throw fileError(error, `listing ${dir}`);
        return [];
      }
      return names.filter((name) => !name.endsWith(".tmp")).map((name) => `${prefix.replace(/\/?$/, "/")}${name}`);
    },
    async remove(key) {
      try {
        rmSync(path(key), { force: true });
      } catch (error) {
        throw fileError(error, `removing ${path(key)}`);
      }
    },
    async download(key, file, options = {}) {
      const source = path(key);
      let opened: { fd: number; stats: Stats };
      try {
        opened = openRegular(source);
      } catch (error) {
        if (!isMissing(error)) throw error;
        checkRoot();
        throw new IoError("io", `${root}: no object ${key}`);
      }
      const { fd, stats } = opened;
      try {
        ensureSpace(dirname(file), stats.size, `the download of ${key}`);
        const hash = hasher();
        copyInSlices({ fd, path: source }, stats.size, file, { onSlice: hash.update, onProgress: options.onProgress });
        return hash.digest();
      } finally {
        closeSync(fd);
      }
    },
    async digest(key, onProgress) {
      const hash = hasher();
      if (!readSlices(path(key), hash.update, onProgress)) {
        checkRoot();
        return null;
      }
      return hash.digest();
    },
  };
}

/** Bun's S3 error codes, by reason (the rest are `storage`). */
const S3_REASONS: Record<string, "unreachable" | "denied" | "missing_location"> = {
  ConnectionRefused: "unreachable",
  ConnectionClosed: "unreachable",
  ConnectionTimedOut: "unreachable",
  FailedToOpenSocket: "unreachable",
  ECONNREFUSED: "unreachable",
  ECONNRESET: "unreachable",
  ENOTFOUND: "unreachable",
  DNSError: "unreachable",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "unreachable",
  DEPTH_ZERO_SELF_SIGNED_CERT: "unreachable",
  AccessDenied: "denied",
  InvalidAccessKeyId: "denied",
  SignatureDoesNotMatch: "denied",
  ERR_S3_MISSING_CREDENTIALS: "denied",
  ERR_S3_INVALID_SIGNATURE: "denied",
  NoSuchBucket: "missing_location",
};

/** An S3-compatible bucket through Bun's client. */
function s3Storage(location: string, bucket: string, prefix: string): ObjectStorage {
  const env = process.env;
  const accessKeyId = env.AWS_ACCESS_KEY_ID ?? env.S3_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY ?? env.S3_SECRET_ACCESS_KEY;
  const client = new Bun.S3Client({ bucket, endpoint: env.S3_ENDPOINT ?? env.AWS_ENDPOINT_URL, accessKeyId, secretAccessKey, region: env.AWS_REGION ?? env.S3_REGION });
  const description = describeLocation(location);
  const full = (key: string) => (prefix === "" ? key : `${prefix}/${key}`);
  const missing = (error: unknown) => (error as { code?: string }).code === "NoSuchKey" || /not found|NoSuchKey|404/i.test(String((error as Error).message));
  /** Credentials never reach a message, whatever the client's error text holds. */
  const scrub = (text: string) => {
    let out = text;
    for (const secret of [accessKeyId, secretAccessKey]) if (secret !== undefined && secret.length >= 4) out = out.split(secret).join("***");
    return out;
  };
  /** Bun's S3 error as an IoError naming the endpoint, the operation and the cause. */
  const failure = (error: unknown, operation: string, key: string): IoError => {
    if (error instanceof IoError) return error;
    const code = (error as { code?: unknown }).code;
    const message = (error as Error)?.message ?? String(error);
    // Bun says "an unexpected error has occurred" for a network failure; its code says which.
    const said = message === "an unexpected error has occurred" || message === "" ? "" : `: ${message}`;
    const cause =
      code === "ERR_S3_MISSING_CREDENTIALS"
        ? "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY), and S3_ENDPOINT or AWS_ENDPOINT_URL for a store other than AWS, AWS_REGION where it needs one"
        : typeof code === "string"
          ? `${code}${said}`
          : message;
    const reason = typeof code === "string" ? (S3_REASONS[code] ?? "storage") : "storage";
    return new IoError(reason, scrub(`${description}: S3 ${operation} of ${bucket}/${full(key)} failed: ${cause}`));
  };
  const stream = async (key: string, onSlice: (slice: Uint8Array) => void, onProgress?: (bytes: number) => void): Promise<boolean> => {
    let at = 0;
    try {
      for await (const chunk of client.file(full(key)).stream() as unknown as AsyncIterable<Uint8Array>) {
        onSlice(chunk);
        at += chunk.length;
        onProgress?.(at);
      }
    } catch (error) {
      if (at === 0 && !(error instanceof IoError) && missing(error)) return false;
      throw failure(error, "GET", key);
    }
    return true;
  };
  return {
    location,
    description,
    async read(key) {
      try {
        return await client.file(full(key)).bytes();
      } catch (error) {
        if (missing(error)) return null;
        throw failure(error, "GET", key);
      }
    },
    async size(key) {
      try {
        return (await client.file(full(key)).stat()).size;
      } catch (error) {
        if (missing(error)) return null;
        throw failure(error, "HEAD", key);
      }
    },
    async upload(key, file, onProgress) {
      const { fd, stats } = openRegular(file);
      const writer = client.file(full(key)).writer({ partSize: SLICE_BYTES, retry: 3 });
      const buffer = new Uint8Array(Math.min(SLICE_BYTES, Math.max(1, stats.size)));
      let at = 0;
      try {
        while (at < stats.size) {
          let n: number;
          try {
            n = readSync(fd, buffer, 0, Math.min(buffer.length, stats.size - at), at);
          } catch (error) {
            throw fileError(error, `reading ${file}`);
          }
          if (n === 0) throw new IoError("io", `reading ${file}: the file ended at byte ${at} of ${stats.size}`);
          // The writer keeps the slice until its part is sent: give it a copy.
          const pending = writer.write(buffer.slice(0, n));
          if (pending instanceof Promise) await pending;
          at += n;
          onProgress?.(at);
        }
        await writer.end();
      } catch (error) {
        try {
          await writer.end(error as Error);
        } catch {
          // the upload is aborted either way
        }
        throw failure(error, "PUT", key);
      } finally {
        closeSync(fd);
      }
    },
    async replace(key, bytes) {
      try {
        await client.write(full(key), bytes, { type: "application/json" });
      } catch (error) {
        throw failure(error, "PUT", key);
      }
    },
    async list(listPrefix) {
      const keys: string[] = [];
      let token: string | undefined;
      const base = full(listPrefix).replace(/\/?$/, "/");
      try {
        for (;;) {
          const page = await client.list({ prefix: base, continuationToken: token });
          for (const item of page.contents ?? []) keys.push(prefix === "" ? item.key : item.key.slice(prefix.length + 1));
          if (!page.isTruncated || page.nextContinuationToken === undefined) break;
          token = page.nextContinuationToken;
        }
      } catch (error) {
        throw failure(error, "LIST", listPrefix);
      }
      return keys;
    },
    async remove(key) {
      try {
        await client.delete(full(key));
      } catch (error) {
        throw failure(error, "DELETE", key);
      }
    },
    async download(key, file, options = {}) {
      if (options.expectedBytes !== undefined) ensureSpace(dirname(file), options.expectedBytes, `the download of ${key}`);
      let fd: number;
      try {
        fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      } catch (error) {
        throw fileError(error, `creating ${file}`);
      }
      const hash = hasher();
      let ok = false;
      try {
        const found = await stream(
          key,
          (slice) => {
            hash.update(slice);
            try {
              writeAll(fd, slice);
            } catch (error) {
              throw fileError(error, `writing ${file}`);
            }
          },
          options.onProgress,
        );
        if (!found) throw new IoError("io", `${description}: no object ${key}`);
        ok = true;
        return hash.digest();
      } finally {
        closeSync(fd);
        if (!ok) removeQuietly(file);
      }
    },
    async digest(key, onProgress) {
      const hash = hasher();
      return (await stream(key, hash.update, onProgress)) ? hash.digest() : null;
    },
  };
}
