/**
 * What may be at the snapshot path when a server starts or reloads, and what its cache may hold:
 * a FIFO (any file whose read would block), a file with a flipped byte but the same header and
 * size, a file truncated behind an intact header (same snapshot id), a cached copy changed
 * after its verification. Nothing hangs, nothing refused replaces what serves, and a restarted
 * worker starts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSnapshotFromGenerator } from "../../src/generate/snapshot.ts";
import { readSnapshotId } from "../../src/snapshot/private-copy.ts";
import { ROOT, type LogLine, spawnServe } from "../support/serve-process.ts";

let dir: string;
let one: string;
let two: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "reload-faults-"));
  one = join(dir, "one.snap");
  two = join(dir, "two.snap");
  buildSnapshotFromGenerator({ count: 3_000, seed: 1 }, one);
  buildSnapshotFromGenerator({ count: 2_000, seed: 2 }, two);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A copy of `from` at a new path in the test directory. */
function copyOf(from: string, name: string): string {
  const path = join(dir, name);
  copyFileSync(from, path);
  return path;
}

/** Replaces `path` with `bytes` by rename, as a builder does. */
function replace(path: string, bytes: Uint8Array): void {
  writeFileSync(`${path}.new`, bytes);
  renameSync(`${path}.new`, path);
}

/** `path`'s bytes with one byte of its last section flipped: same size, same header. */
function flipped(path: string): Uint8Array {
  const bytes = readFileSync(path);
  bytes[bytes.length - 9] ^= 0xff;
  return bytes;
}

/** The snapshot id a server answers with. */
async function servedId(url: string): Promise<string | null> {
  const response = await fetch(`${url}/api/users?pageSize=1`);
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  return response.headers.get("x-snapshot-id");
}

const reloadFailed = (reason: string) => (l: LogLine) => l.msg === "reload failed; still serving the previous snapshot" && l.reason === reason;

describe("the snapshot path", () => {
  test("serve --snapshot FIFO exits at once with a message naming it, instead of hanging", async () => {
    const path = join(dir, "start.fifo");
    expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0);
    const child = Bun.spawn([process.execPath, join(ROOT, "src", "cli.ts"), "serve", "--snapshot", path, "--port", "0", "--no-demo"], { cwd: ROOT, stdout: "ignore", stderr: "pipe" });
    const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
    expect(code).toBe(1);
    expect(stderr).toContain(`error: ${path} is a FIFO (named pipe), not a regular file`);
  }, 30_000);

  test("SIGHUP with a FIFO at the path: refused at once, /healthz never waits, the old version serves; a real file then reloads", async () => {
    const path = copyOf(one, "hup-fifo.snap");
    const server = await spawnServe(path, ["--cache-dir", join(dir, "hup-fifo-cache")]);
    try {
      const before = await servedId(server.url);
      rmSync(path);
      expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0);
      server.child.kill("SIGHUP");
      const failed = await server.waitForLine(reloadFailed("not_a_file"), { what: "the FIFO refused" });
      expect(String((failed.err as { message: string }).message)).toBe(`${path} is a FIFO (named pipe), not a regular file`);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect(await servedId(server.url)).toBe(before);
      rmSync(path);
      copyFileSync(two, path);
      const at = server.logs().length;
      server.child.kill("SIGHUP");
      await server.waitForLine((l) => l.msg === "snapshot reloaded", { after: at, what: "the reload" });
      expect(await servedId(server.url)).toBe(readSnapshotId(two));
    } finally {
      await server.dispose();
    }
  }, 60_000);

  test("a flipped byte with the same header and size is refused on SIGHUP, and the copy serving stays in the cache", async () => {
    const path = copyOf(one, "flip.snap");
    const cache = join(dir, "flip-cache");
    const server = await spawnServe(path, ["--cache-dir", cache]);
    try {
      const id = readSnapshotId(one);
      replace(path, flipped(one));
      expect(readSnapshotId(path)).toBe(id);
      server.child.kill("SIGHUP");
      const failed = await server.waitForLine(reloadFailed("refused"), { what: "the corrupt file refused" });
      expect(String((failed.err as { message: string }).message)).toMatch(new RegExp(`^${path}: corrupt: section .* fails its checksum$`));
      expect(server.logs().some((l) => l.msg === "snapshot reloaded")).toBe(false);
      expect(await servedId(server.url)).toBe(id);
      expect(readdirSync(cache).sort()).toEqual([`${id}.snap`, `${id}.snap.verified`]);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toContain('users_listing_snapshot_reloads_total{result="refused"} 1');
    } finally {
      await server.dispose();
    }
  }, 60_000);

  test("a cached copy changed after its verification is not reused: a restart copies and verifies the file again", async () => {
    const path = copyOf(one, "cached.snap");
    const cache = join(dir, "cached-cache");
    const first = await spawnServe(path, ["--cache-dir", cache]);
    let id: string | null;
    try {
      id = await servedId(first.url);
      first.child.kill("SIGTERM");
      await first.finished();
    } finally {
      await first.dispose();
    }
    const copy = join(cache, `${id}.snap`);
    writeFileSync(copy, flipped(copy));
    const again = await spawnServe(path, ["--cache-dir", cache]);
    try {
      const loaded = await again.waitForLine((l) => l.msg === "snapshot loaded", { what: "the load" });
      expect(loaded.copy).toBe("copied");
      expect(readFileSync(copy).equals(readFileSync(one))).toBe(true);
      expect(await servedId(again.url)).toBe(id);
      // and an unchanged one is reused without reading it
      again.child.kill("SIGTERM");
      await again.finished();
      const third = await spawnServe(path, ["--cache-dir", cache]);
      try {
        expect((await third.waitForLine((l) => l.msg === "snapshot loaded")).copy).toBe("reused");
      } finally {
        await third.dispose();
      }
    } finally {
      await again.dispose();
    }
  }, 60_000);
});

describe("serve --workers", () => {
  test("a file truncated behind its header (same snapshot id) is refused by every worker, the cached copy stays, and a restarted worker serves it", async () => {
    const path = copyOf(one, "workers.snap");
    const cache = join(dir, "workers-cache");
    const supervisor = await spawnServe(path, ["--workers", "2", "--cache-dir", cache]);
    try {
      const listening = (n: number) => supervisor.waitForLine(() => supervisor.logs().filter((l) => l.msg === "listening").length >= n, { what: `${n} workers listening` });
      await listening(2);
      // a new version first: every worker reloads it
      replace(path, readFileSync(two));
      supervisor.child.kill("SIGHUP");
      await supervisor.waitForLine(() => supervisor.logs().filter((l) => l.msg === "snapshot reloaded").length >= 2, { what: "both workers reloaded" });
      const id = readSnapshotId(two);
      expect(await servedId(supervisor.url)).toBe(id);

      truncateSync(path, Math.floor(readFileSync(two).length / 2));
      expect(readSnapshotId(path)).toBe(id);
      supervisor.child.kill("SIGHUP");
      await supervisor.waitForLine(() => supervisor.logs().filter(reloadFailed("refused")).length >= 2, { what: "both workers refusing the truncated file" });
      expect(existsSync(join(cache, `${id}.snap`))).toBe(true);

      const pid = supervisor.logs().filter((l) => l.msg === "worker started")[0].pid as number;
      process.kill(pid, "SIGKILL");
      const fallback = await supervisor.waitForLine((l) => l.msg === "the snapshot file is refused; serving the verified cached copy of the same snapshot instead", { what: "the restarted worker's fallback" });
      expect(fallback.snapshotId).toBe(id);
      expect(String(fallback.refused)).toContain(`${path}: truncated`);
      await listening(3);
      const ids = new Set(await Promise.all(Array.from({ length: 20 }, () => servedId(supervisor.url))));
      expect([...ids]).toEqual([id]);
    } finally {
      supervisor.child.kill("SIGTERM");
      await supervisor.dispose();
    }
  }, 60_000);
});
