/** The single binary: `npm run build` output starts and answers both endpoints. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary } from "../scripts/build-binary.ts";

let dir: string;
let proc: ReturnType<typeof Bun.spawn> | null = null;
let url = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "users-bin-"));
  const binary = await buildBinary();
  // Generate a data file and build its snapshot with the binary itself (the email column is
  // built by the embedded worker), then serve it from another working directory.
  const data = join(dir, "u.ndjson");
  const snapshot = join(dir, "u.snap");
  const generate = Bun.spawnSync([binary, "generate", "--count", "5000", "--seed", "7", "--out", data], { cwd: dir });
  expect(generate.exitCode).toBe(0);
  const build = Bun.spawnSync([binary, "snapshot", "build", data, "-o", snapshot], { cwd: dir, stderr: "pipe" });
  expect(build.stderr.toString()).toContain("5000 rows");
  expect(build.exitCode).toBe(0);
  proc = Bun.spawn([binary, "serve", "--snapshot", snapshot, "--port", "0"], { cwd: dir, stderr: "pipe", stdout: "ignore" });
  const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
  let log = "";
  // the wait ends with "listening" or with the process's exit
  const exited = proc.exited.then(() => ({ value: undefined, done: true as const }));
  while (!url) {
    const { value, done } = await Promise.race([reader.read(), exited]);
    if (done) break;
    log += new TextDecoder().decode(value);
    // pino JSON lines: the one whose msg is "listening" carries the url (other fields may come between)
    const line = log.split("\n").slice(0, -1).find((l) => l.includes('"msg":"listening"'));
    if (line !== undefined) url = (JSON.parse(line) as { url: string }).url;
  }
  try {
    reader.releaseLock();
  } catch {
    // a read still pending when the process exited: the stream is ending anyway
  }
  if (!url) throw new Error(`binary did not start:\n${log}`);
}, 120_000);

afterAll(async () => {
  proc?.kill();
  await proc?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe("compiled binary", () => {
  test("GET with the seed's spelling", async () => {
    const body = await (await fetch(`${url}/api/users?page=2&pageSize=20&sortBy=email&sortOrder=desc&filter%5Bstatus%5D=active`)).json();
    expect(body.data).toHaveLength(20);
    expect(body.page).toBe(2);
    expect(body.pagination.totalPages).toBe(Math.ceil(body.total / 20));
    expect(body.data.every((u: { status: string }) => u.status === "active")).toBe(true);
  });

  test("POST row window", async () => {
    const res = await fetch(`${url}/api/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ startRow: 100, endRow: 200, sortModel: [{ colId: "name", sort: "asc" }], filterModel: {} }),
    });
    const body = await res.json();
    expect(res.status).toBe(200);
    expect(body.total).toBe(5000);
    expect(body.data).toHaveLength(100);
  });

  test("errors, health and the embedded docs UI", async () => {
    const bad = await fetch(`${url}/api/users?sortBy=nope`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toBe("application/problem+json");
    expect((await (await fetch(`${url}/healthz`)).json()).rows).toBe(5000);
    const js = await fetch(`${url}/openapi/assets/scalar.js`);
    expect(js.status).toBe(200);
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
  });
});
