/**
 * Where published snapshots live: a shared directory or an S3-compatible bucket under a prefix,
 * behind one small interface (objects by key, a manifest replaced atomically). S3 goes through
 * Bun's built-in client, configured from the standard environment variables (S3_ENDPOINT or
 * AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION; S3_* spellings too).
 */
import { createReadStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { copyFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

/** Objects under one location (a directory, or a bucket and prefix). Keys use `/`. */
export interface ObjectStorage {
  /** The location as the user gave it (for messages). */
  readonly location: string;
  /** An object's bytes, or null when it does not exist. */
  read(key: string): Promise<Uint8Array | null>;
  /** An object's size in bytes, or null when it does not exist. */
  size(key: string): Promise<number | null>;
  /** Writes an object from a local file (streamed). */
  upload(key: string, file: string): Promise<void>;
  /**
   * Writes a small object so that readers see the old or the new content, never a part: a
   * rename in a directory, one PUT in S3.
   */
  replace(key: string, bytes: Uint8Array): Promise<void>;
  /** Keys under `prefix` (relative to the location). */
  list(prefix: string): Promise<string[]>;
  /** Removes an object (nothing when it does not exist). */
  remove(key: string): Promise<void>;
  /** Streams an object into a local file; rejects when it does not exist. */
  download(key: string, file: string, onChunk?: (chunk: Uint8Array) => void): Promise<void>;
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

/** A shared directory: objects are files; `replace` writes a temporary file and renames it. */
function dirStorage(root: string): ObjectStorage {
  const path = (key: string) => join(root, ...key.split("/"));
  return {
    location: root,
    async read(key) {
      const file = Bun.file(path(key));
      return (await file.exists()) ? new Uint8Array(await file.arrayBuffer()) : null;
    },
    async size(key) {
      return existsSync(path(key)) ? statSync(path(key)).size : null;
    },
    async upload(key, file) {
      const target = path(key);
      mkdirSync(dirname(target), { recursive: true });
      const temporary = `${target}.${process.pid}.tmp`;
      await copyFile(file, temporary);
      renameSync(temporary, target);
    },
    async replace(key, bytes) {
      const target = path(key);
      mkdirSync(dirname(target), { recursive: true });
      const temporary = `${target}.${process.pid}.tmp`;
      writeFileSync(temporary, bytes);
      renameSync(temporary, target);
    },
    async list(prefix) {
      const dir = path(prefix);
      if (!existsSync(dir)) return [];
      return readdirSync(dir)
        .filter((name) => !name.endsWith(".tmp"))
        .map((name) => `${prefix.replace(/\/?$/, "/")}${name}`);
    },
    async remove(key) {
      rmSync(path(key), { force: true });
    },
    async download(key, file, onChunk) {
      const source = path(key);
      if (!existsSync(source)) throw new Error(`${root}: no object ${key}`);
      const writer = Bun.file(file).writer();
      for await (const chunk of createReadStream(source, { highWaterMark: 4 << 20 })) {
        const bytes = chunk as Buffer;
        onChunk?.(bytes);
        writer.write(bytes);
      }
      await writer.end();
    },
  };
}

/** An S3-compatible bucket through Bun's client. */
function s3Storage(location: string, bucket: string, prefix: string): ObjectStorage {
  const env = process.env;
  const client = new Bun.S3Client({
    bucket,
    endpoint: env.S3_ENDPOINT ?? env.AWS_ENDPOINT_URL,
    accessKeyId: env.AWS_ACCESS_KEY_ID ?? env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? env.S3_SECRET_ACCESS_KEY,
    region: env.AWS_REGION ?? env.S3_REGION,
  });
  const full = (key: string) => (prefix === "" ? key : `${prefix}/${key}`);
  const missing = (error: unknown) => (error as { code?: string }).code === "NoSuchKey" || /not found|NoSuchKey|404/i.test(String((error as Error).message));
  return {
    location,
    async read(key) {
      try {
        return await client.file(full(key)).bytes();
      } catch (error) {
        if (missing(error)) return null;
        throw error;
      }
    },
    async size(key) {
      try {
        return (await client.file(full(key)).stat()).size;
      } catch (error) {
        if (missing(error)) return null;
        throw error;
      }
    },
    async upload(key, file) {
      await client.write(full(key), Bun.file(file));
    },
    async replace(key, bytes) {
      await client.write(full(key), bytes, { type: "application/json" });
    },
    async list(listPrefix) {
      const keys: string[] = [];
      let token: string | undefined;
      const base = full(listPrefix).replace(/\/?$/, "/");
      for (;;) {
        const page = await client.list({ prefix: base, continuationToken: token });
        for (const item of page.contents ?? []) keys.push(prefix === "" ? item.key : item.key.slice(prefix.length + 1));
        if (!page.isTruncated || page.nextContinuationToken === undefined) break;
        token = page.nextContinuationToken;
      }
      return keys;
    },
    async remove(key) {
      await client.delete(full(key));
    },
    async download(key, file, onChunk) {
      const writer = Bun.file(file).writer();
      const stream = client.file(full(key)).stream();
      for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
        onChunk?.(chunk);
        writer.write(chunk);
      }
      await writer.end();
    },
  };
}
