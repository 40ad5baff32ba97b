/**
 * Replicas that follow a published location (`serve --source … --poll …`), as processes over a
 * shared directory and over S3 (s3rver on loopback): the first snapshot downloaded and served,
 * a newly published version swapped in at the next poll with every request answered meanwhile,
 * a tampered download refused with the old version still serving, a rollback followed too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publishSnapshot, rollbackSnapshot } from "../../src/publish/publish.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";
import { type TestS3, startS3 } from "../support/s3.ts";
import { defaultLocationDir } from "../../src/snapshot/private-copy.ts";
import { ROOT, type ServeProcess, spawnServe } from "../support/serve-process.ts";

let dir: string;
let s3: TestS3;
let env: Record<string, string>;

/** A snapshot of `n` users whose names carry `tag`. */
function snapshotOf(tag: string, n: number): string {
  const path = join(dir, `${tag}.snap`);
  writeSnapshot(path, buildStoreFromRecords(Array.from({ length: n }, (_, i) => ({ id: i + 1, name: `${tag} ${i}`, email: `u${i}@x`, status: "active" }))));
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "users-follow-"));
  // this process publishes too: the S3 variables are set here as well as passed to the replicas
  s3 = await startS3(dir, "fleet");
  env = s3.env;
});

afterAll(async () => {
  await s3?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The served snapshot's id and row count, from /healthz. */
async function health(replica: ServeProcess): Promise<{ snapshotId: string; rows: number }> {
  return (await fetch(`${replica.url}/healthz`)).json() as Promise<{ snapshotId: string; rows: number }>;
}

/**
 * Resolves once the replica logs that it serves `snapshotId` ("snapshot loaded" at start-up,
 * "snapshot reloaded" after a swap), looking at its log lines from the `after`-th on, then
 * checks /healthz says so too.
 */
async function waitFor(replica: ServeProcess, snapshotId: string, after = 0): Promise<void> {
  await replica.waitForLine((l) => (l.msg === "snapshot loaded" || l.msg === "snapshot reloaded") && l.snapshotId === snapshotId, { after, what: `serving ${snapshotId}` });
  expect((await health(replica)).snapshotId).toBe(snapshotId);
}

for (const kind of ["directory", "s3"] as const) {
  describe(`serve --source (${kind})`, () => {
    test("serves the published snapshot, follows a new version with no failed request, refuses a tampered one, follows a rollback", async () => {
      const location = kind === "s3" ? "s3://fleet/users" : join(dir, "shared");
      const v1 = await publishSnapshot(snapshotOf(`one-${kind}`, 300), location);
      const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--cache-dir", join(dir, `replica-${kind}`)], env);
      try {
        // the version serving, and when it was built (the manifest's createdAt), once downloaded
        await waitFor(replica, v1.current.snapshotId);
        expect(await health(replica)).toMatchObject({ status: "ok", rows: 300, snapshotId: v1.current.snapshotId, createdAt: v1.current.createdAt } as never);
        expect(replica.logs().some((l) => l.msg === "snapshot downloaded" && l.snapshotId === v1.current.snapshotId)).toBe(true);

        // requests keep going while a new version is published and swapped in
        let failures = 0;
        let answered = 0;
        let running = true;
        const load = (async () => {
          while (running) {
            const response = await fetch(`${replica.url}/api/users?pageSize=5&sortBy=name`);
            if (response.status !== 200) failures++;
            const body = (await response.json()) as { total: number };
            if (body.total !== 300 && body.total !== 500) failures++;
            answered++;
          }
        })();
        const v2 = await publishSnapshot(snapshotOf(`two-${kind}`, 500), location);
        await waitFor(replica, v2.current.snapshotId);
        running = false;
        await load;
        expect(failures).toBe(0);
        expect(answered).toBeGreaterThan(0);

        // a tampered object: the download is refused, v2 keeps serving
        const v3 = await publishSnapshot(snapshotOf(`three-${kind}`, 700), location);
        if (kind === "directory") {
          const object = join(location, ...v3.current.key.split("/"));
          const bytes = readFileSync(object);
          bytes[bytes.length - 1] ^= 0xff;
          writeFileSync(object, bytes);
        } else {
          const client = new Bun.S3Client({ bucket: "fleet", endpoint: env.AWS_ENDPOINT_URL, accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "us-east-1" });
          const bytes = await client.file(`users/${v3.current.key}`).bytes();
          bytes[bytes.length - 1] ^= 0xff;
          await client.write(`users/${v3.current.key}`, bytes);
        }
        await replica.waitForLog("following the source failed; still serving the previous snapshot");
        expect((await health(replica)).snapshotId).toBe(v2.current.snapshotId);

        // a rollback to v2 is what it serves already; one to v1 is followed
        await rollbackSnapshot(location);
        const rolledBackAt = replica.logs().length;
        const back = await rollbackSnapshot(location, v1.current.snapshotId);
        expect(back.current.snapshotId).toBe(v1.current.snapshotId);
        await waitFor(replica, v1.current.snapshotId, rolledBackAt);
        expect((await health(replica)).rows).toBe(300);
      } finally {
        await replica.dispose();
      }
    }, 60_000);
  });
}

describe("serve --source before anything is published", () => {
  test("/readyz is a 503 problem until the first snapshot is published and served on the same port, with no refused or reset connection at the handover", async () => {
    const location = join(dir, "later");
    const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--cache-dir", join(dir, "replica-later")], env);
    try {
      const waiting = await fetch(`${replica.url}/readyz`);
      expect(waiting.status).toBe(503);
      expect(waiting.headers.get("content-type")).toBe("application/problem+json");
      expect(await waiting.json()).toMatchObject({ status: 503, state: "starting" });
      expect((await fetch(`${replica.url}/api/users`)).status).toBe(503);
      // Clients on keep-alive connections ask all along: every answer is the placeholder's 503
      // or the real server's 200, never a refused or reset connection (fetch would throw).
      const statuses = new Map<number, number>();
      let running = true;
      let sawAll200: () => void = () => {};
      const seen200 = new Promise<void>((resolve) => {
        sawAll200 = resolve;
      });
      const ok = [0, 0, 0, 0];
      const clients = Array.from({ length: 4 }, async (_, client) => {
        while (running) {
          const response = await fetch(`${replica.url}/readyz`);
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          if (response.status === 200 && ++ok[client] === 5 && ok.every((n) => n >= 5)) sawAll200();
        }
      });
      const published = await publishSnapshot(snapshotOf("later", 40), location);
      await replica.waitForLine((l) => l.msg === "snapshot loaded" && l.snapshotId === published.current.snapshotId, { what: "the first snapshot loaded" });
      const ready = await fetch(`${replica.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: "ready", rows: 40, snapshotId: published.current.snapshotId });
      // the clients go on over their connections until each has had answers from the real server
      await seen200;
      running = false;
      await Promise.all(clients);
      expect([...statuses.keys()].sort()).toEqual([200, 503]);
      expect((statuses.get(200) ?? 0) > 0 && (statuses.get(503) ?? 0) > 0).toBe(true);
    } finally {
      await replica.dispose();
    }
  }, 60_000);
});

describe("serve --source without --cache-dir", () => {
  test("keeps its downloads and copies in the user's cache directory (XDG_CACHE_HOME), and writes nothing into its working directory", async () => {
    const location = join(dir, "no-cache-dir");
    const published = await publishSnapshot(snapshotOf("no-cache-dir", 25), location);
    const xdg = join(dir, "xdg-cache");
    const before = readdirSync(ROOT).sort();
    const replica = await spawnServe(null, ["--source", location, "--poll", "1"], { ...env, XDG_CACHE_HOME: xdg });
    try {
      await waitFor(replica, published.current.snapshotId);
      const home = defaultLocationDir("replica", location, { XDG_CACHE_HOME: xdg });
      expect(home.startsWith(join(xdg, "users-listing", "replica"))).toBe(true);
      expect(readdirSync(join(home, "downloads"))).toEqual(["current.snap"]);
      expect(readdirSync(home)).toContain(`${published.current.snapshotId}.snap`);
      // the working directory (the repository's root here) holds what it held
      expect(readdirSync(ROOT).sort()).toEqual(before);
    } finally {
      await replica.dispose();
    }
  }, 60_000);
});
