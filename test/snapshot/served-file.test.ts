/**
 * What operators may do to the snapshot file a running server was started with (docs/operations
 * in the README): overwrite it in place, truncate it, delete it. The server keeps answering from
 * the version it loaded — never a crash (a mapped file that shrinks kills its reader with SIGBUS)
 * and never a mix of two versions — and SIGHUP loads whatever valid file is there then.
 *
 * The server runs as a child process: a crash must fail this test, not end the test runner.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildSnapshotFromGenerator } from "../../src/snapshot/build-file.ts";

const REPO = resolve(import.meta.dir, "../..");
let dir: string;
let one: string;
let two: string;
let proc: Bun.Subprocess<"ignore", "ignore", "pipe"> | null = null;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "served-file-"));
  one = join(dir, "one.snap");
  two = join(dir, "two.snap");
  buildSnapshotFromGenerator({ count: 20_000, seed: 1 }, one);
  buildSnapshotFromGenerator({ count: 5_000, seed: 2 }, two);
});
afterAll(() => {
  proc?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `serve --snapshot path` and resolves with its URL once it logs "listening". */
async function serve(path: string): Promise<string> {
  proc = Bun.spawn([process.execPath, join(REPO, "src/cli.ts"), "serve", "--snapshot", path, "--port", "0", "--no-demo"], {
    cwd: dir,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, LOG_LEVEL: "info" },
  });
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  let log = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited before listening:\n${log}`);
    log += decoder.decode(value, { stream: true });
    const line = log.split("\n").find((l) => l.includes('"msg":"listening"'));
    if (line !== undefined) {
      reader.releaseLock();
      return (JSON.parse(line) as { url: string }).url;
    }
  }
}

/** Every row of the served snapshot, in id order, by pages of 1000, and the snapshot id of each answer. */
async function everyRow(url: string): Promise<{ rows: unknown[]; ids: Set<string | null> }> {
  const rows: unknown[] = [];
  const ids = new Set<string | null>();
  for (let start = 0; ; start += 1000) {
    const response = await fetch(`${url}/api/users`, { method: "POST", body: JSON.stringify({ startRow: start, endRow: start + 1000 }) });
    expect(response.status).toBe(200);
    ids.add(response.headers.get("x-snapshot-id"));
    const body = (await response.json()) as { data: unknown[]; total: number };
    rows.push(...body.data);
    if (start + 1000 >= body.total) return { rows, ids };
  }
}

describe("the served snapshot file", () => {
  test("truncated, overwritten in place and deleted while serving: the server keeps serving what it loaded, then reloads on SIGHUP", async () => {
    const served = join(dir, "served.snap");
    copyFileSync(one, served);
    const url = await serve(served);
    const before = await everyRow(url);
    expect(before.rows.length).toBe(20_000);

    truncateSync(served, 0);
    expect((await everyRow(url)).rows).toEqual(before.rows);
    writeFileSync(served, readFileSync(two));
    expect((await everyRow(url)).rows).toEqual(before.rows);
    unlinkSync(served);
    expect((await everyRow(url)).rows).toEqual(before.rows);

    // A reload with no valid file keeps the old version; with one, serves the new one.
    proc?.kill("SIGHUP");
    await Bun.sleep(300);
    expect((await everyRow(url)).rows).toEqual(before.rows);
    copyFileSync(two, served);
    proc?.kill("SIGHUP");
    let after = await everyRow(url);
    for (let i = 0; i < 50 && after.rows.length !== 5_000; i++) {
      await Bun.sleep(100);
      after = await everyRow(url);
    }
    expect(after.rows.length).toBe(5_000);
    expect(proc?.exitCode).toBeNull();
  }, 60_000);
});
