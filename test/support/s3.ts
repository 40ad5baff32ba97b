/**
 * Test helper: a real S3-compatible server (s3rver, from npm) on loopback with one bucket, made
 * read-after-write consistent like S3 ({@link readAfterWrite}), and this process's S3 environment
 * pointed at it (Bun's S3 client reads AWS_ENDPOINT_URL,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION), restored on stop.
 */
import { createHash, randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import S3rver from "s3rver";

/** A running S3 server: the variables that reach it (for child processes too), and its stop. */
export interface TestS3 {
  env: Record<string, string>;
  stop: () => Promise<void>;
}

/** The part of s3rver's file system store that {@link readAfterWrite} replaces. */
interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
  putObject(object: { bucket: string; key: string; content: Buffer | Readable; metadata: unknown }): Promise<{ size: number; md5: string }>;
}

/**
 * Makes s3rver read-after-write consistent, as S3 is: its store answers a PUT once the body has
 * passed through (or, for a buffer, once the write is merely queued), before the file is
 * written, so a GET right after it could read a truncated object (seen once this service's
 * uploads ran on threads of their own). Here an object is written to a temporary file, finished,
 * then renamed into place before the PUT is answered.
 */
function readAfterWrite(store: S3rverStore): void {
  store.putObject = async (object) => {
    const objectPath = store.getResourcePath(object.bucket, object.key, "object");
    await mkdir(dirname(objectPath), { recursive: true });
    const temporary = `${objectPath}.${randomUUID()}.partial`;
    const md5 = createHash("md5");
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        md5.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    await pipeline(Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content, count, createWriteStream(temporary));
    await rename(temporary, objectPath);
    const digest = md5.digest("hex");
    await store.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  };
}

/** Starts s3rver storing under `dir/s3` with bucket `bucket`, and sets this process's S3 variables. */
export async function startS3(dir: string, bucket: string): Promise<TestS3> {
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: join(dir, "s3"), configureBuckets: [{ name: bucket, configs: [] }] });
  readAfterWrite((server as unknown as { store: S3rverStore }).store);
  const { port } = await server.run();
  const env = { AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`, AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER", AWS_REGION: "us-east-1" };
  const saved: Record<string, string | undefined> = { S3_ENDPOINT: process.env.S3_ENDPOINT };
  delete process.env.S3_ENDPOINT;
  for (const [key, value] of Object.entries(env)) {
    saved[key] = process.env[key];
    process.env[key] = value;
  }
  return {
    env,
    stop: async () => {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      await server.close();
    },
  };
}
