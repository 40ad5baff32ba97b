/**
 * Test helper: a real S3-compatible server (s3rver, from npm) on loopback with one bucket, and
 * this process's S3 environment pointed at it (Bun's S3 client reads AWS_ENDPOINT_URL,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION), restored on stop.
 */
import { join } from "node:path";
import S3rver from "s3rver";

/** A running S3 server: the variables that reach it (for child processes too), and its stop. */
export interface TestS3 {
  env: Record<string, string>;
  stop: () => Promise<void>;
}

/** Starts s3rver storing under `dir/s3` with bucket `bucket`, and sets this process's S3 variables. */
export async function startS3(dir: string, bucket: string): Promise<TestS3> {
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: join(dir, "s3"), configureBuckets: [{ name: bucket, configs: [] }] });
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
