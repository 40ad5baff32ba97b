/**
 * The storage's failures as a person reads them (src/io/storage.ts): an S3 endpoint that
 * refuses connections, one that refuses the credentials, an endpoint URL carrying a password,
 * a shared directory that is gone. The message names the location, the endpoint, the operation
 * and the cause; never a credential.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IoError } from "../../src/files/errors.ts";
import { describeLocation, openStorage } from "../../src/io/storage.ts";
import { type TestS3, startS3 } from "../support/s3.ts";

let dir: string;
let s3: TestS3;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "io-storage-"));
  s3 = await startS3(dir, "store");
});
afterAll(async () => {
  await s3?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `work` with these S3 variables, then puts the test server's back. */
async function withEnv<T>(env: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await work();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** The error `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<IoError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IoError);
  return error as IoError;
}

describe("S3 failures", () => {
  test("a refused connection: unreachable, naming the endpoint, the operation, the object and the cause", async () => {
    const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = closed.port;
    closed.stop(true);
    const error = await withEnv({ AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` }, () => failure(openStorage("s3://store/fleet").read("manifest.json")));
    expect(error.reason).toBe("unreachable");
    expect(error.message).toBe(`s3://store/fleet (endpoint http://127.0.0.1:${port}): S3 GET of store/fleet/manifest.json failed: ConnectionRefused`);
  });

  test("refused credentials: denied, and neither the key id nor the secret appears", async () => {
    const secret = "very-secret-value-31b7";
    const error = await withEnv({ AWS_ACCESS_KEY_ID: "AKIAEXAMPLEKEYID0042", AWS_SECRET_ACCESS_KEY: secret }, () => failure(openStorage("s3://store/fleet").read("snapshots/x.snap")));
    expect(error.reason).toBe("denied");
    expect(error.message).toStartWith(`s3://store/fleet (endpoint ${s3.env.AWS_ENDPOINT_URL}): S3 GET of store/fleet/snapshots/x.snap failed: InvalidAccessKeyId: `);
    expect(error.message).not.toContain(secret);
    expect(error.message).not.toContain("AKIAEXAMPLEKEYID0042");
  });

  test("no credentials: denied, naming the variables to set", async () => {
    const error = await withEnv({ AWS_ACCESS_KEY_ID: "", AWS_SECRET_ACCESS_KEY: "", S3_ACCESS_KEY_ID: "", S3_SECRET_ACCESS_KEY: "" }, () => failure(openStorage("s3://store/fleet").read("manifest.json")));
    expect(error.reason).toBe("denied");
    expect(error.message).toContain("S3 GET of store/fleet/manifest.json failed: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
  });

  test("an endpoint URL with a user and password is named without them", async () => {
    await withEnv({ AWS_ENDPOINT_URL: "https://user:p4ssw0rd@s3.example.com:9000/" }, async () => {
      expect(describeLocation("s3://b/p")).toBe("s3://b/p (endpoint https://s3.example.com:9000)");
    });
  });
});

describe("directory failures", () => {
  test("a directory that is gone is missing_location for a read, not 'nothing published'; an existing one without the object reads null", async () => {
    const root = join(dir, "gone");
    const error = await failure(openStorage(root).read("manifest.json"));
    expect(error).toMatchObject({ reason: "missing_location", message: `${root}: the directory does not exist (removed, renamed, or not mounted)` });
    expect(await openStorage(dir).read("manifest.json")).toBeNull();
    // a publisher creates it: its size and list questions see nothing there yet
    expect(await openStorage(root).size("snapshots/x.snap")).toBeNull();
    expect(await openStorage(root).list("snapshots")).toEqual([]);
  });
});
