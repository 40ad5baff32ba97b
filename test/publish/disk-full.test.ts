/**
 * Full disks, on a real 40 MiB tmpfs (skipped, with the reason printed, where none can be
 * mounted): a replica whose cache directory is full at start-up or when a new version is
 * published, a server whose cache fills before a reload, a publish to a full destination. Each
 * time nothing crashes, no partial file is left, the log says which directory is full and how
 * much was needed, and everything recovers by itself once there is space again.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publishSnapshot } from "../../src/publish/publish.ts";
import { buildSnapshotFromGenerator } from "../../src/generate/snapshot.ts";
import { readSnapshotId } from "../../src/snapshot/private-copy.ts";
import { ROOT, type LogLine, spawnServe } from "../support/serve-process.ts";
import { type Tmpfs, tmpfsOrSkip } from "../support/tmpfs.ts";

const dir = mkdtempSync(join(tmpdir(), "disk-full-"));
/** The tmpfs's size, in MiB: two snapshots of ~11 MiB fit, not when it is filled. */
const DISK_MIB = 40;
const disk: Tmpfs | null = tmpfsOrSkip(join(dir, "tmpfs"), DISK_MIB, "the disk-full tests (test/publish/disk-full.test.ts)");
const MiB = 2 ** 20;
let one: string;
let two: string;

beforeAll(() => {
  one = join(dir, "one.snap");
  two = join(dir, "two.snap");
  // about 11 MiB each (the search index is most of it): a few fit in the tmpfs, not when it is filled
  buildSnapshotFromGenerator({ count: 20_000, seed: 1 }, one);
  buildSnapshotFromGenerator({ count: 21_000, seed: 2 }, two);
});
afterAll(() => {
  disk?.unmount();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory on the tmpfs, the tmpfs filled so that `leave` bytes stay free; returns the filler. */
function onFullDisk(name: string, leave: number): { path: string; filler: string } {
  const fs = disk as Tmpfs;
  for (const entry of readdirSync(fs.dir)) rmSync(join(fs.dir, entry), { recursive: true, force: true });
  const path = join(fs.dir, name);
  return { path, filler: fs.fillLeaving(".filler", leave) };
}

/** Every file under `root` (relative paths). */
function filesUnder(root: string): string[] {
  return existsSync(root) ? (readdirSync(root, { recursive: true }) as string[]).filter((p) => statSync(join(root, p)).isFile()).sort() : [];
}

const noSpace = (msg: string) => (l: LogLine) => l.msg === msg && l.reason === "no_space";

describe.skipIf(disk === null)("a full disk", () => {
  test("a replica whose cache directory is full at start-up answers 503 with the reason, leaves no partial download, and starts once there is space", async () => {
    const location = join(dir, "start-source");
    const published = await publishSnapshot(one, location);
    const { path: cache, filler } = onFullDisk("start-cache", 2 * MiB);
    const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--cache-dir", cache]);
    try {
      const failed = await replica.waitForLine(noSpace("no snapshot to serve yet; trying again"), { what: "no space" });
      expect(String(failed.error)).toMatch(new RegExp(`^${join(cache, "downloads")}: no space for the download of ${published.current.key}: it needs \\d+\\.\\d MiB, the file system has \\d+\\.\\d MiB free$`));
      const waiting = await fetch(`${replica.url}/readyz`);
      expect(waiting.status).toBe(503);
      expect(await waiting.json()).toMatchObject({ state: "starting", source: { lastPoll: { result: "failed", reason: "no_space" } } });
      expect(filesUnder(cache)).toEqual([]);
      rmSync(filler);
      await replica.waitForLine((l) => l.msg === "snapshot loaded" && l.snapshotId === published.current.snapshotId, { what: "the first snapshot" });
      expect((await fetch(`${replica.url}/readyz`)).status).toBe(200);
      // the download is the private copy (a link): one file's worth of space
      expect(filesUnder(cache)).toEqual([`${published.current.snapshotId}.snap`, `${published.current.snapshotId}.snap.verified`, "downloads/current.snap"]);
      expect(statSync(join(cache, "downloads", "current.snap")).ino).toBe(statSync(join(cache, `${published.current.snapshotId}.snap`)).ino);
    } finally {
      await replica.dispose();
    }
  }, 60_000);

  test("a replica serving when the next version does not fit keeps serving, says why, leaves no partial file, and follows once there is space", async () => {
    const location = join(dir, "serving-source");
    const v1 = await publishSnapshot(one, location);
    const { path: cache } = onFullDisk("serving-cache", DISK_MIB * MiB);
    const replica = await spawnServe(null, ["--source", location, "--poll", "1", "--cache-dir", cache]);
    try {
      await replica.waitForLine((l) => l.msg === "snapshot loaded" && l.snapshotId === v1.current.snapshotId, { what: "v1" });
      const filler = (disk as Tmpfs).fillLeaving("filler", 2 * MiB);
      const v2 = await publishSnapshot(two, location);
      const failed = await replica.waitForLine(noSpace("following the source failed; still serving the previous snapshot"), { what: "no space for v2" });
      expect(String(failed.error)).toContain(`${join(cache, "downloads")}: no space for the download of ${v2.current.key}`);
      expect(failed.servingSnapshotId).toBe(v1.current.snapshotId);
      const ready = await fetch(`${replica.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ snapshotId: v1.current.snapshotId, source: { lastPoll: { reason: "no_space" }, latestSnapshotId: v2.current.snapshotId } });
      expect(filesUnder(cache).filter((f) => f.endsWith(".download") || f.endsWith(".tmp"))).toEqual([]);
      rmSync(filler);
      await replica.waitForLine((l) => l.msg === "snapshot reloaded" && l.snapshotId === v2.current.snapshotId, { what: "v2" });
      expect(replica.child.exitCode).toBeNull();
    } finally {
      await replica.dispose();
    }
  }, 60_000);

  test("a reload whose copy does not fit in the cache is refused by name, leaves no temporary file, and the next SIGHUP with space reloads", async () => {
    const path = join(dir, "reload.snap");
    writeFileSync(path, readFileSync(one));
    const { path: cache } = onFullDisk("reload-cache", DISK_MIB * MiB);
    const server = await spawnServe(path, ["--cache-dir", cache]);
    try {
      await server.waitForLine((l) => l.msg === "snapshot loaded");
      const filler = (disk as Tmpfs).fillLeaving("filler", 2 * MiB);
      writeFileSync(`${path}.new`, readFileSync(two));
      renameSync(`${path}.new`, path);
      server.child.kill("SIGHUP");
      const failed = await server.waitForLine(noSpace("reload failed; still serving the previous snapshot"), { what: "no space for the copy" });
      expect(String((failed.err as { message: string }).message)).toMatch(new RegExp(`^${cache}: no space for a private copy of ${path}: it needs \\d+\\.\\d MiB`));
      expect(filesUnder(cache).filter((f) => f.endsWith(".tmp"))).toEqual([]);
      const before = readSnapshotId(one);
      expect((await fetch(`${server.url}/api/users?pageSize=1`)).headers.get("x-snapshot-id")).toBe(before);
      rmSync(filler);
      const at = server.logs().length;
      server.child.kill("SIGHUP");
      await server.waitForLine((l) => l.msg === "snapshot reloaded", { after: at, what: "the reload with space" });
      expect((await fetch(`${server.url}/api/users?pageSize=1`)).headers.get("x-snapshot-id")).toBe(readSnapshotId(two));
    } finally {
      await server.dispose();
    }
  }, 60_000);

  test("snapshot publish to a full directory fails with the reason, leaves no *.tmp and the manifest as it was; with space it publishes", async () => {
    const { path: location, filler } = onFullDisk("published", 2 * MiB);
    const cli = (file: string) => Bun.spawnSync([process.execPath, join(ROOT, "src", "cli.ts"), "snapshot", "publish", file, "--to", location], { stdout: "pipe", stderr: "pipe", env: process.env });
    const failed = cli(one);
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr.toString()).toMatch(/^error: writing .*\/published\/snapshots\/[0-9a-f]{16}\.snap\.\d+\.tmp: no space left on the device \(ENOSPC\) after [1-9]\d*\.\d MiB of \d+\.\d MiB/);
    expect(filesUnder(location)).toEqual([]);
    rmSync(filler);
    expect(cli(one).exitCode).toBe(0);
    expect(filesUnder(location)).toEqual(["manifest.json", `snapshots/${readSnapshotId(one)}.snap`]);
  }, 60_000);
});
