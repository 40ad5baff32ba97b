/**
 * Publishing snapshots (`snapshot publish`, `snapshot rollback`) to a shared directory and to a
 * real S3-compatible server on loopback (s3rver, through Bun's S3 client configured from the
 * standard environment variables): content-addressed objects, the manifest replaced in one
 * step, earlier versions kept and pruned, rollbacks, an unloadable file refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createHash } from "node:crypto";
import { KEPT_VERSIONS, MANIFEST_KEY, type Repair, fileSha256, parseManifest, publishSnapshot, readManifest, rollbackSnapshot } from "../../src/publish/publish.ts";
import { readSnapshotId } from "../../src/snapshot/private-copy.ts";
import { openStorage } from "../../src/io/storage.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { type TestS3, startS3 } from "../support/s3.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";

let dir: string;
let s3: TestS3;

/** A snapshot of `n` users whose names carry `tag` (so each tag is a different snapshot). */
function snapshotOf(tag: string, n = 50): string {
  const path = join(dir, `${tag}.snap`);
  writeSnapshot(path, buildStoreFromRecords(Array.from({ length: n }, (_, i) => ({ id: i + 1, name: `${tag} ${i}`, email: `u${i}@x`, status: i % 2 === 0 ? "active" : "inactive" }))));
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "users-publish-"));
  s3 = await startS3(dir, "snaps");
});

afterAll(async () => {
  await s3?.stop();
  rmSync(dir, { recursive: true, force: true });
});

for (const kind of ["directory", "s3"] as const) {
  describe(`publish and rollback: ${kind}`, () => {
    const location = () => (kind === "s3" ? "s3://snaps/fleet/users" : join(dir, "shared"));

    test("publish: the object under its snapshot id, then the manifest naming it with its checksum, size, rows", async () => {
      const a = snapshotOf(`a-${kind}`);
      const manifest = await publishSnapshot(a, location(), new Date("2026-01-02T03:04:05Z"));
      const storage = openStorage(location());
      expect(manifest.previous).toEqual([]);
      expect(manifest.current).toMatchObject({ key: `snapshots/${manifest.current.snapshotId}.snap`, rows: 50, bytes: readFileSync(a).length, publishedAt: "2026-01-02T03:04:05.000Z" });
      expect(manifest.current.sha256).toBe(await fileSha256(a));
      expect(Buffer.compare(Buffer.from((await storage.read(manifest.current.key)) as Uint8Array), readFileSync(a))).toBe(0);
      expect(await readManifest(storage)).toEqual(manifest);
      // publishing the current snapshot again changes nothing
      expect(await publishSnapshot(a, location(), new Date())).toEqual(manifest);
    });

    test(`each publish keeps ${KEPT_VERSIONS} earlier versions and prunes older objects; rollback by one or by id`, async () => {
      const storage = openStorage(location());
      const ids: string[] = [(await readManifest(storage))?.current.snapshotId as string];
      for (let v = 0; v < KEPT_VERSIONS + 1; v++) ids.push((await publishSnapshot(snapshotOf(`v${v}-${kind}`), location())).current.snapshotId);
      const manifest = (await readManifest(storage)) as NonNullable<Awaited<ReturnType<typeof readManifest>>>;
      expect(manifest.current.snapshotId).toBe(ids.at(-1) as string);
      expect(manifest.previous.map((e) => e.snapshotId)).toEqual(ids.slice(-1 - KEPT_VERSIONS, -1).reverse());
      expect((await storage.list("snapshots")).sort()).toEqual([manifest.current, ...manifest.previous].map((e) => e.key).sort());

      const back = await rollbackSnapshot(location());
      expect(back.current.snapshotId).toBe(ids.at(-2) as string);
      expect(back.previous[0].snapshotId).toBe(ids.at(-1) as string);
      const byId = await rollbackSnapshot(location(), ids.at(-4));
      expect(byId.current.snapshotId).toBe(ids.at(-4) as string);
      expect(await readManifest(storage)).toEqual(byId);
      await expect(rollbackSnapshot(location(), "0000000000000000")).rejects.toThrow(/no earlier version 0000000000000000/);
    });

    test("an object at its key that is not the file (a flipped byte, same size) is found by its checksum and uploaded again, republishing or not", async () => {
      const storage = openStorage(location());
      const damage = async (key: string) => {
        const bytes = (await storage.read(key)) as Uint8Array;
        bytes[bytes.length - 1] ^= 0xff;
        if (kind === "directory") writeFileSync(join(location(), ...key.split("/")), bytes);
        else {
          const { AWS_ENDPOINT_URL: endpoint, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: region } = s3.env;
          await new Bun.S3Client({ bucket: "snaps", endpoint, accessKeyId, secretAccessKey, region }).write(`fleet/users/${key}`, bytes);
        }
        return bytes;
      };
      const file = snapshotOf(`repair-${kind}`);
      const published = await publishSnapshot(file, location());
      const damaged = await damage(published.current.key);
      const repairs: Repair[] = [];
      // the same snapshot again: the manifest stays, the object is repaired
      expect(await publishSnapshot(file, location(), new Date(), { onRepair: (r) => repairs.push(r) })).toEqual(published);
      expect(repairs).toEqual([{ key: published.current.key, found: { bytes: damaged.length, sha256: createHash("sha256").update(damaged).digest("hex") } }]);
      expect(Buffer.from((await storage.read(published.current.key)) as Uint8Array).equals(readFileSync(file))).toBe(true);
      // a new version whose object is there already, damaged: repaired, then named
      const next = snapshotOf(`repair-next-${kind}`);
      const nextId = readSnapshotId(next);
      await storage.upload(`snapshots/${nextId}.snap`, next);
      await damage(`snapshots/${nextId}.snap`);
      repairs.length = 0;
      const after = await publishSnapshot(next, location(), new Date(), { onRepair: (r) => repairs.push(r) });
      expect(after.current.snapshotId).toBe(nextId);
      expect(repairs.map((r) => r.key)).toEqual([`snapshots/${nextId}.snap`]);
      expect(Buffer.from((await storage.read(after.current.key)) as Uint8Array).equals(readFileSync(next))).toBe(true);
    });

    test("a file that is not a loadable snapshot is refused and the manifest is unchanged", async () => {
      const storage = openStorage(location());
      const before = await readManifest(storage);
      const bad = join(dir, `bad-${kind}.snap`);
      writeFileSync(bad, "not a snapshot at all, just some bytes");
      await expect(publishSnapshot(bad, location())).rejects.toThrow(/bad magic|shorter than/);
      expect(await readManifest(storage)).toEqual(before);
    });
  });
}

describe("the command line", () => {
  test("snapshot publish and rollback print what they did; a rollback with nothing published fails", () => {
    const root = resolve(import.meta.dir, "..", "..");
    const cli = (...args: string[]) => Bun.spawnSync([process.execPath, join(root, "src", "cli.ts"), "snapshot", ...args], { stdout: "pipe", stderr: "pipe", env: process.env });
    const target = join(dir, "cli-shared");
    const firstFile = snapshotOf("cli-1");
    const first = cli("publish", firstFile, "--to", target);
    expect(first.exitCode).toBe(0);
    expect(first.stderr.toString()).toMatch(/^published [0-9a-f]{16} \(50 rows, .* MiB\) to .* in \d+ ms; 0 earlier version\(s\) kept\n$/);
    // publishing the current version again publishes nothing, and says so
    const again = cli("publish", firstFile, "--to", target);
    expect(again.exitCode).toBe(0);
    expect(again.stderr.toString()).toMatch(/^unchanged: [0-9a-f]{16} \(50 rows\) is already the current version at .*, published \d{4}-/);
    const second = snapshotOf("cli-2");
    expect(cli("publish", second, "--to", target).exitCode).toBe(0);
    // a damaged object is said to be uploaded again, then published
    const object = join(target, "snapshots", `${readSnapshotId(second)}.snap`);
    const bytes = readFileSync(object);
    bytes[100] ^= 0xff;
    writeFileSync(object, bytes);
    const repaired = cli("publish", second, "--to", target);
    expect(repaired.exitCode).toBe(0);
    expect(repaired.stderr.toString()).toMatch(
      new RegExp(`^snapshots/${readSnapshotId(second)}\\.snap at ${target} did not match the file \\(\\d+ bytes, SHA-256 [0-9a-f]{64}\\): uploading it again\\npublished ${readSnapshotId(second)} `),
    );
    expect(readFileSync(object).equals(readFileSync(second))).toBe(true);
    const rollback = cli("rollback", "--to", target);
    expect(rollback.exitCode).toBe(0);
    const manifest = JSON.parse(readFileSync(join(target, MANIFEST_KEY), "utf8"));
    expect(rollback.stderr.toString()).toContain(`current at ${target}: ${manifest.current.snapshotId} (50 rows`);
    const none = cli("rollback", "--to", join(dir, "empty"));
    expect(none.exitCode).toBe(1);
    expect(none.stderr.toString()).toContain("nothing published (no manifest.json)");
  });
});

describe("manifest validation", () => {
  const entry = { snapshotId: "0123456789abcdef", key: "snapshots/0123456789abcdef.snap", sha256: "a".repeat(64), bytes: 1000, rows: 10, createdAt: "2026-01-02T03:04:05.000Z", publishedAt: "2026-01-02T03:04:06.000Z" };
  const parse = (manifest: unknown) => () => parseManifest(new TextEncoder().encode(JSON.stringify(manifest)), "/srv/shared");
  test("a valid manifest parses as it is", () => {
    expect(parse({ current: entry, previous: [entry] })()).toEqual({ current: entry, previous: [entry] });
  });
  test("ids that are not 16 hex digits, keys not named after them, missing checksums and sizes are refused by field", () => {
    const refused = (manifest: unknown, problem: string) => expect(parse(manifest)).toThrow(`/srv/shared: manifest.json is not a valid manifest: ${problem}; nothing in it is used`);
    refused({ current: { ...entry, snapshotId: "../../x" }, previous: [] }, 'current has a snapshotId that is not 16 hex digits ("../../x")');
    refused({ current: { ...entry, snapshotId: "0123456789ABCDEF" }, previous: [] }, 'current has a snapshotId that is not 16 hex digits ("0123456789ABCDEF")');
    refused({ current: { ...entry, key: "../../etc/passwd" }, previous: [] }, 'current has key "../../etc/passwd", not snapshots/0123456789abcdef.snap');
    refused({ current: { ...entry, sha256: undefined }, previous: [] }, "current has no SHA-256 (64 hex digits)");
    refused({ current: { ...entry, bytes: "1000" }, previous: [] }, "current has no size in bytes (a positive integer)");
    refused({ current: { ...entry, bytes: 0 }, previous: [] }, "current has no size in bytes (a positive integer)");
    refused({ current: entry, previous: [{ ...entry, snapshotId: "x" }] }, 'previous[0] has a snapshotId that is not 16 hex digits ("x")');
    refused({ current: entry }, "previous is not a list");
    expect(() => parseManifest(new TextEncoder().encode("{"), "/srv/shared")).toThrow(/^\/srv\/shared: manifest.json is not a valid manifest: it is not JSON/);
  });
});
