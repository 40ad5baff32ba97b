/**
 * Question: what do hostile requests cost the server — memory that stays, error bodies larger
 * than the request, work that stalls everyone? Each case runs against a freshly spawned server
 * (`serve --snapshot F --no-demo`) of the source tree at `--root` (default: this checkout), so
 * the same script measures an older checkout for a before/after comparison.
 *
 * Cases:
 * - long values: 9,000 POSTs, each a distinct 60 KB `contains` value (8 at a time); then 9,000
 *   distinct 256-character values (the most a filter value may be): server RSS before and after;
 * - amplification: one 63 KB body of 21,000 bad OR conditions (its answer's size and time), then
 *   8 clients sending it in a loop for 5 s while a ninth times cheap GETs (p50/p99);
 * - chunked bodies: 40 parallel 15 MiB chunked POSTs: server RSS before and after;
 * - 3,500 OR'ed `id equals` conditions in one POST: status and time.
 *
 * Usage: `bun bench/hostile.ts FILE.snap [--root DIR] [--only long,amplification,chunked,ids]`
 * (prints one line per measurement).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { quantile } from "./measure.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { root: { type: "string" }, only: { type: "string" } } });
const snapshot = positionals[0];
if (snapshot === undefined) throw new Error("usage: bun bench/hostile.ts FILE.snap [--root DIR]");
const root = resolve(values.root ?? join(import.meta.dir, ".."));

/** Resident set size of a process, in MiB (Linux /proc). */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m === null ? Number.NaN : Math.round(Number(m[1]) / 1024);
}

/** Spawns `serve` of the tree at `root` and resolves once it logs "listening". */
async function spawn(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = Bun.spawn([process.execPath, join(root, "src/cli.ts"), "serve", "--snapshot", resolve(snapshot), "--port", "0", "--no-demo"], {
    cwd: root,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, LOG_LEVEL: "info" },
  });
  const reader = child.stderr.getReader();
  const decoder = new TextDecoder();
  let log = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${log.slice(-400)}`);
    log += decoder.decode(value, { stream: true });
    const line = log.split("\n").find((l) => l.includes('"listening"'));
    if (line !== undefined) {
      (async () => {
        while (!(await reader.read()).done) {}
      })().catch(() => {});
      return {
        url: (JSON.parse(line) as { url: string }).url,
        pid: child.pid,
        stop: async () => {
          child.kill("SIGKILL");
          await child.exited;
        },
      };
    }
  }
}

/** Runs `jobs` with at most `width` at once. */
async function pool(count: number, width: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

/** POSTs a JSON body; resolves with the status, the answer's bytes and the time taken (ms). */
async function post(url: string, body: string): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${url}/api/users`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const bytes = (await response.arrayBuffer()).byteLength;
  return { status: response.status, bytes, ms: performance.now() - started };
}

/** Statuses seen, as "200×n, 400×m". */
function tally(statuses: number[]): string {
  const counts = new Map<number, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${s}×${n}`).join(", ");
}

async function longValues(): Promise<void> {
  for (const length of [60 * 1024, 256]) {
    const server = await spawn();
    const before = rssMiB(server.pid);
    const statuses: number[] = [];
    await pool(9_000, 8, async (i) => {
      const value = `${i}`.padStart(length, "q");
      statuses.push((await post(server.url, JSON.stringify({ filterModel: { name: { filterType: "text", type: "contains", filter: value } } }))).status);
    });
    Bun.gc(true);
    await Bun.sleep(500);
    console.log(`long values: 9,000 distinct ${length}-character contains values: RSS ${before} → ${rssMiB(server.pid)} MiB (${tally(statuses)})`);
    await server.stop();
  }
}

async function amplification(): Promise<void> {
  const server = await spawn();
  // `{}` conditions: each inherits the text filterType and lacks its "filter" (one error each)
  const conditions = Array.from({ length: 21_000 }, () => ({}));
  const body = JSON.stringify({ filterModel: { name: { filterType: "text", operator: "OR", conditions } } });
  const one = await post(server.url, body);
  console.log(`amplification: ${conditions.length} bad conditions in ${body.length} bytes → ${one.status}, ${one.bytes} bytes in ${one.ms.toFixed(1)} ms`);
  const cheap = async (until: number) => {
    const times: number[] = [];
    while (performance.now() < until) {
      const started = performance.now();
      await (await fetch(`${server.url}/api/users?page=3&pageSize=10&sortBy=name`)).arrayBuffer();
      times.push(performance.now() - started);
    }
    return times;
  };
  const quiet = await cheap(performance.now() + 2_000);
  const until = performance.now() + 5_000;
  const attackers = Array.from({ length: 8 }, async () => {
    while (performance.now() < until) await post(server.url, body).catch(() => undefined);
  });
  const loaded = await cheap(until);
  await Promise.all(attackers);
  const ms = (times: number[], q: number) => quantile(times.sort((a, b) => a - b), q).toFixed(2);
  console.log(`amplification: cheap GETs alone p50 ${ms(quiet, 0.5)} / p99 ${ms(quiet, 0.99)} ms; beside 8 such clients p50 ${ms(loaded, 0.5)} / p99 ${ms(loaded, 0.99)} ms`);
  await server.stop();
}

async function chunked(): Promise<void> {
  const server = await spawn();
  const before = rssMiB(server.pid);
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const statuses: number[] = [];
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMiB(server.pid));
  }, 50);
  await Promise.all(
    Array.from({ length: 40 }, async () => {
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= 15 * 1024 * 1024) return controller.close();
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      });
      try {
        const response = await fetch(`${server.url}/api/users`, { method: "POST", headers: { "content-type": "application/json" }, body: stream });
        await response.arrayBuffer();
        statuses.push(response.status);
      } catch {
        statuses.push(0);
      }
    }),
  );
  clearInterval(sampler);
  Bun.gc(true);
  await Bun.sleep(500);
  console.log(`chunked: 40 parallel 15 MiB chunked POSTs: RSS ${before} → peak ${peak} → ${rssMiB(server.pid)} MiB (${tally(statuses)}; 0 = connection closed by the server)`);
  await server.stop();
}

async function manyIds(): Promise<void> {
  const server = await spawn();
  // compact conditions (filterType inherited, type "equals" by default) so that the body fits 64 KiB
  const conditions = Array.from({ length: 3_500 }, (_, i) => ({ filter: i * 17 + 1 }));
  const r = await post(server.url, JSON.stringify({ filterModel: { id: { filterType: "number", operator: "OR", conditions } } }));
  console.log(`3,500 OR'ed id equals: ${r.status} in ${r.ms.toFixed(1)} ms (${r.bytes} bytes)`);
  await server.stop();
}

console.log(`server: ${root}; snapshot: ${snapshot}`);
const cases = { long: longValues, amplification, chunked, ids: manyIds };
const only = values.only?.split(",") ?? Object.keys(cases);
for (const [name, run] of Object.entries(cases)) if (only.includes(name)) await run();
