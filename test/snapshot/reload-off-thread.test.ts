/**
 * A reload is made off the thread that answers requests (src/server.ts, src/io/threads.ts): the
 * new version's copy and verification are held at a gate on the I/O thread (a FIFO that the
 * test opens when it chooses), and meanwhile every request is answered from the old version;
 * once the gate opens, the new version swaps in.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, constants, copyFileSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createFileThreads } from "../../src/io/threads.ts";
import { startServer } from "../../src/server.ts";
import { buildSnapshotFromGenerator } from "../../src/generate/snapshot.ts";
import { readSnapshotId } from "../../src/snapshot/private-copy.ts";

let dir: string;
let one: string;
let two: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "reload-off-thread-"));
  one = join(dir, "one.snap");
  two = join(dir, "two.snap");
  buildSnapshotFromGenerator({ count: 3_000, seed: 1 }, one);
  buildSnapshotFromGenerator({ count: 2_000, seed: 2 }, two);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The snapshot id a server answers with. */
async function servedId(url: string): Promise<string | null> {
  const response = await fetch(`${url}/api/users?pageSize=1`);
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  return response.headers.get("x-snapshot-id");
}

describe("reloads off the request path", () => {
  test("while the new version is copied and verified (held at a gate on the I/O thread), requests are answered from the old one; then it swaps in", async () => {
    const gate = join(dir, "gate.fifo");
    expect(Bun.spawnSync(["mkfifo", gate]).exitCode).toBe(0);
    const path = join(dir, "gated.snap");
    copyFileSync(one, path);
    process.env.IO_GATE_KIND = "prepare";
    process.env.IO_GATE_FIFO = gate;
    const threads = createFileThreads({ workerUrl: new URL("../support/gated-io-worker.ts", import.meta.url).href });
    const server = startServer({ snapshot: path, port: 0, host: "127.0.0.1", maxPageSize: 100, logger: pino({ level: "silent" }), cacheDir: join(dir, "gated-cache"), threads });
    try {
      const before = readSnapshotId(one);
      writeFileSync(`${path}.new`, readFileSync(two));
      renameSync(`${path}.new`, path);
      let settled = false;
      const reloading = server.reload().finally(() => {
        settled = true;
      });
      for (let i = 0; i < 20; i++) expect(await servedId(server.url)).toBe(before);
      expect(settled).toBe(false);
      // open the gate: the I/O thread goes on, and the new version swaps in
      closeSync(openSync(gate, constants.O_WRONLY));
      await reloading;
      expect(await servedId(server.url)).toBe(readSnapshotId(two));
    } finally {
      delete process.env.IO_GATE_KIND;
      delete process.env.IO_GATE_FIFO;
      await server.stop();
      threads.close();
    }
  }, 30_000);
});
