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
import { join } from "node:path";
import { buildSnapshotFromGenerator } from "../../src/generate/snapshot.ts";
import { type ServeProcess, spawnServe } from "../support/serve-process.ts";

let dir: string;
let one: string;
let two: string;
let server: ServeProcess | null = null;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "served-file-"));
  one = join(dir, "one.snap");
  two = join(dir, "two.snap");
  buildSnapshotFromGenerator({ count: 20_000, seed: 1 }, one);
  buildSnapshotFromGenerator({ count: 5_000, seed: 2 }, two);
});
afterAll(async () => {
  await server?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

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
    server = await spawnServe(served);
    const url = server.url;
    const before = await everyRow(url);
    expect(before.rows.length).toBe(20_000);

    truncateSync(served, 0);
    expect((await everyRow(url)).rows).toEqual(before.rows);
    writeFileSync(served, readFileSync(two));
    expect((await everyRow(url)).rows).toEqual(before.rows);
    unlinkSync(served);
    expect((await everyRow(url)).rows).toEqual(before.rows);

    // A reload with no valid file keeps the old version; with one, serves the new one.
    const refusedAt = server.logs().length;
    server.child.kill("SIGHUP");
    await server.waitForLine((l) => l.msg === "reload failed; still serving the previous snapshot", { after: refusedAt, what: "the reload refused" });
    expect((await everyRow(url)).rows).toEqual(before.rows);
    copyFileSync(two, served);
    const reloadAt = server.logs().length;
    server.child.kill("SIGHUP");
    await server.waitForLine((l) => l.msg === "snapshot reloaded", { after: reloadAt, what: "the reload" });
    const after = await everyRow(url);
    expect(after.rows.length).toBe(5_000);
    expect(after.ids.size).toBe(1);
    expect(server.child.exitCode).toBeNull();
  }, 60_000);
});
