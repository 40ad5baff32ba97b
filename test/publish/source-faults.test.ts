/**
 * A replica's source misbehaving, as processes (`serve --source`): a manifest that is a FIFO
 * (standing in for a hung mount), a source directory that disappears, an S3 endpoint that
 * accepts connections and never answers, one that refuses them, a manifest naming a path
 * instead of a snapshot id, an object damaged at its key. Each time the replica keeps serving (or starting, with a 503),
 * logs what failed — the location, the operation, the cause, never a credential — shows it on
 * /readyz and /metrics, and follows the source again by itself once the fault is gone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Manifest, publishSnapshot } from "../../src/publish/publish.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
import { type TestS3, startS3 } from "../support/s3.ts";
import { type LogLine, type ServeProcess, spawnServe } from "../support/serve-process.ts";
import { type TcpProxy, startTcpProxy } from "../support/tcp-proxy.ts";

let dir: string;
let s3: TestS3;

/** A snapshot of `n` users whose names carry `tag`. */
function snapshotOf(tag: string, n: number): string {
  const path = join(dir, `${tag}.snap`);
  writeSnapshot(path, buildStoreFromRecords(Array.from({ length: n }, (_, i) => ({ id: i + 1, name: `${tag} ${i}`, email: `u${i}@x`, status: "active" }))));
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "users-source-faults-"));
  s3 = await startS3(dir, "faults");
});

afterAll(async () => {
  await s3?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** GET a JSON route of the replica: status and body. */
async function json(replica: ServeProcess, path: string): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(`${replica.url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** The value of one sample of /metrics, or null. */
async function metric(replica: ServeProcess, sample: string): Promise<number | null> {
  const text = await (await fetch(`${replica.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
  return line === undefined ? null : Number(line.slice(sample.length + 1));
}

/** The line that says a poll failed for `reason`, while serving (or before the first snapshot). */
const failedFor = (reason: string, serving = true) => (l: LogLine) =>
  l.msg === (serving ? "following the source failed; still serving the previous snapshot" : "no snapshot to serve yet; trying again") && l.reason === reason;

/** The line that says `snapshotId` is serving now. */
const serving = (snapshotId: string) => (l: LogLine) => (l.msg === "snapshot loaded" || l.msg === "snapshot reloaded") && l.snapshotId === snapshotId;

describe("a directory source", () => {
  test("a manifest that is a FIFO: refused at once by name, the replica keeps serving and says so, then follows the next publish", async () => {
    const location = join(dir, "fifo-source");
    const v1 = await publishSnapshot(snapshotOf("fifo-one", 40), location);
    const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--cache-dir", join(dir, "fifo-cache")]);
    try {
      await replica.waitForLine(serving(v1.current.snapshotId), { what: "v1 serving" });
      const manifest = join(location, "manifest.json");
      rmSync(manifest);
      expect(Bun.spawnSync(["mkfifo", manifest]).exitCode).toBe(0);
      const failed = await replica.waitForLine(failedFor("not_a_file"), { what: "the FIFO refused" });
      expect(failed.error).toBe(`${manifest} is a FIFO (named pipe), not a regular file`);
      expect(failed.source).toBe(location);
      expect(failed.servingSnapshotId).toBe(v1.current.snapshotId);

      // meanwhile it serves, and /readyz and /metrics say why it is not following
      const ready = await json(replica, "/readyz");
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: "ready", snapshotId: v1.current.snapshotId, source: { lastPoll: { result: "failed", reason: "not_a_file" }, latestSnapshotId: v1.current.snapshotId } });
      expect(ready.body.source.consecutiveFailures).toBeGreaterThanOrEqual(1);
      expect(JSON.stringify(ready.body)).not.toContain(location);
      expect(await metric(replica, 'users_listing_source_poll_failures_total{reason="not_a_file"}')).toBeGreaterThanOrEqual(1);
      expect(await metric(replica, "users_listing_source_last_poll_success")).toBe(0);

      // the fault goes: the next publish replaces the FIFO by a manifest, and is followed
      rmSync(manifest);
      const v2 = await publishSnapshot(snapshotOf("fifo-two", 60), location);
      const reloaded = replica.logs().length;
      await replica.waitForLine(serving(v2.current.snapshotId), { after: reloaded, what: "v2 serving" });
      await replica.waitForLine((l) => l.msg === "following the source again", { what: "the recovery" });
      const after = await json(replica, "/readyz");
      expect(after.body).toMatchObject({ snapshotId: v2.current.snapshotId, rows: 60, source: { lastPoll: { result: "ok" }, consecutiveFailures: 0 } });
    } finally {
      await replica.dispose();
    }
  }, 60_000);

  test("a source directory that disappears is logged as such (not as 'nothing published'), and followed again once it is back", async () => {
    const location = join(dir, "gone-source");
    const v1 = await publishSnapshot(snapshotOf("gone-one", 30), location);
    const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--cache-dir", join(dir, "gone-cache")]);
    try {
      await replica.waitForLine(serving(v1.current.snapshotId), { what: "v1 serving" });
      renameSync(location, `${location}.away`);
      const failed = await replica.waitForLine(failedFor("missing_location"), { what: "the missing directory" });
      expect(failed.error).toBe(`${location}: the directory does not exist (removed, renamed, or not mounted)`);
      expect((await json(replica, "/readyz")).body).toMatchObject({ status: "ready", source: { lastPoll: { result: "failed", reason: "missing_location" } } });
      renameSync(`${location}.away`, location);
      const v2 = await publishSnapshot(snapshotOf("gone-two", 35), location);
      await replica.waitForLine(serving(v2.current.snapshotId), { what: "v2 serving" });
    } finally {
      await replica.dispose();
    }
  }, 60_000);

  test('a manifest naming "../../x" as a snapshot id is refused before anything is written; a valid one is then followed', async () => {
    const location = join(dir, "evil-source");
    const good = await publishSnapshot(snapshotOf("evil-good", 25), location);
    const evil: Manifest = { current: { ...good.current, snapshotId: "../../x" }, previous: [] };
    writeFileSync(join(location, "manifest.json"), JSON.stringify(evil));
    const cache = join(dir, "evil-cache");
    const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--cache-dir", cache]);
    try {
      const failed = await replica.waitForLine(failedFor("bad_manifest", false), { what: "the manifest refused" });
      expect(failed.error).toContain('manifest.json is not a valid manifest: current has a snapshotId that is not 16 hex digits ("../../x")');
      const waiting = await json(replica, "/readyz");
      expect(waiting.status).toBe(503);
      expect(waiting.body).toMatchObject({ state: "starting", source: { lastPoll: { result: "failed", reason: "bad_manifest" } } });
      // nothing was written for it, inside the cache or beside it
      expect(readdirSync(dir).filter((name) => name.startsWith("x."))).toEqual([]);
      expect(existsSync(join(cache, "downloads")) ? readdirSync(join(cache, "downloads")) : []).toEqual([]);

      // a missing checksum is refused the same way
      const { sha256: _, ...noChecksum } = good.current;
      writeFileSync(join(location, "manifest.json"), JSON.stringify({ current: noChecksum, previous: [] }));
      await replica.waitForLine((l) => failedFor("bad_manifest", false)(l) && String(l.error).includes("has no SHA-256"), { what: "the missing checksum" });

      writeFileSync(join(location, "manifest.json"), JSON.stringify(good));
      await replica.waitForLine(serving(good.current.snapshotId), { what: "the valid manifest followed" });
      expect((await json(replica, "/readyz")).status).toBe(200);
    } finally {
      await replica.dispose();
    }
  }, 60_000);
});

describe("a damaged object", () => {
  test("is refused by its checksum, then not downloaded again at every poll; once republished (repaired) it is followed", async () => {
    const location = join(dir, "damaged-source");
    const v1 = await publishSnapshot(snapshotOf("damaged-one", 30), location);
    const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--cache-dir", join(dir, "damaged-cache")]);
    try {
      await replica.waitForLine(serving(v1.current.snapshotId), { what: "v1 serving" });
      const file = snapshotOf("damaged-two", 50);
      const v2 = await publishSnapshot(file, location);
      const object = join(location, ...v2.current.key.split("/"));
      const bytes = readFileSync(object);
      bytes[bytes.length - 1] ^= 0xff;
      // put in place whole (a replica polling meanwhile must not read a half-written file)
      writeFileSync(`${object}.damaged`, bytes);
      renameSync(`${object}.damaged`, object);
      const first = await replica.waitForLine(failedFor("checksum"), { what: "the damaged object refused" });
      expect(String(first.error)).toStartWith(`download of ${v2.current.key} from ${location} refused: `);
      const waiting = await replica.waitForLine((l) => failedFor("checksum")(l) && String(l.error).includes("not downloaded again before"), { what: "the wait before the next download" });
      // (a poll delayed past the first wait, on a loaded machine, downloads and refuses it once more first)
      expect(String(waiting.error)).toMatch(/\(refused \d+ times?; not downloaded again before \S+ unless the manifest changes\)$/);
      expect(replica.logs().some((l) => l.msg === "snapshot downloaded" && l.snapshotId === v2.current.snapshotId)).toBe(false);
      // the publisher repairs the object; the replica takes it at its next try
      expect((await publishSnapshot(file, location)).current.snapshotId).toBe(v2.current.snapshotId);
      await replica.waitForLine(serving(v2.current.snapshotId), { what: "v2 serving" });
    } finally {
      await replica.dispose();
    }
  }, 60_000);
});

describe("an S3 source", () => {
  let proxy: TcpProxy;
  let s3Port: number;
  beforeAll(async () => {
    s3Port = Number(new URL(s3.env.AWS_ENDPOINT_URL).port);
    proxy = await startTcpProxy(s3Port);
  });
  afterAll(async () => {
    await proxy?.stop();
  });

  test("an endpoint that accepts and never answers: the read times out by name, the replica keeps serving, then follows once it answers", async () => {
    const location = "s3://faults/hung";
    const v1 = await publishSnapshot(snapshotOf("hung-one", 30), location);
    const endpoint = `http://127.0.0.1:${proxy.port}`;
    const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--io-timeout", "1", "--cache-dir", join(dir, "hung-cache")], { ...s3.env, AWS_ENDPOINT_URL: endpoint });
    try {
      await replica.waitForLine(serving(v1.current.snapshotId), { what: "v1 serving" });
      await proxy.mode("blackhole");
      const failed = await replica.waitForLine(failedFor("timeout"), { what: "the time-out" });
      expect(failed.error).toBe(`reading manifest.json from ${location} (endpoint ${endpoint}): no progress for 1 s; the operation is abandoned (timed out)`);
      // the thread that answers requests never waited
      const ready = await json(replica, "/readyz");
      expect(ready).toMatchObject({ status: 200, body: { snapshotId: v1.current.snapshotId, source: { lastPoll: { result: "failed", reason: "timeout" } } } });
      expect(await metric(replica, 'users_listing_source_poll_failures_total{reason="timeout"}')).toBeGreaterThanOrEqual(1);
      expect(await metric(replica, "users_listing_source_staleness_seconds")).toBeGreaterThanOrEqual(0);

      const v2 = await publishSnapshot(snapshotOf("hung-two", 45), location);
      await proxy.mode("forward");
      await replica.waitForLine(serving(v2.current.snapshotId), { what: "v2 serving" });
      expect((await json(replica, "/readyz")).body).toMatchObject({ snapshotId: v2.current.snapshotId, source: { lastPoll: { result: "ok" } } });
    } finally {
      await proxy.mode("forward");
      await replica.dispose();
    }
  }, 60_000);

  test("an unreachable endpoint at start-up: 503 with the reason, a log line naming the endpoint, the operation and the cause (no credential), then ready once it is up", async () => {
    const location = "s3://faults/unreachable";
    const v1 = await publishSnapshot(snapshotOf("unreachable-one", 20), location);
    const down = await startTcpProxy(s3Port);
    const endpoint = `http://127.0.0.1:${down.port}`;
    await down.mode("closed");
    const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--cache-dir", join(dir, "unreachable-cache")], { ...s3.env, AWS_ENDPOINT_URL: endpoint });
    try {
      const failed = await replica.waitForLine(failedFor("unreachable", false), { what: "the refused connection" });
      expect(failed.error).toBe(`${location} (endpoint ${endpoint}): S3 GET of faults/unreachable/manifest.json failed: ConnectionRefused`);
      const waiting = await json(replica, "/readyz");
      expect(waiting).toMatchObject({ status: 503, body: { state: "starting", source: { lastPoll: { result: "failed", reason: "unreachable" } } } });
      await down.mode("forward");
      await replica.waitForLine(serving(v1.current.snapshotId), { what: "v1 serving" });
      expect((await json(replica, "/readyz")).status).toBe(200);
      // s3rver's key id and secret are both "S3RVER": neither reaches a log line
      const everything = JSON.stringify(replica.logs());
      expect(everything).not.toContain(s3.env.AWS_SECRET_ACCESS_KEY);
      expect(everything).not.toContain("an unexpected error has occurred");
    } finally {
      await replica.dispose();
      await down.stop();
    }
  }, 60_000);
});
