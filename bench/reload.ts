/**
 * Question: does a reload hold requests up? The cheap mix (bench/http.ts) runs against
 * `serve --snapshot F` from a closed-loop client that records when each answer came and how
 * long it took; F is then replaced by another snapshot and the server gets SIGHUP (a new
 * version: copied, verified, mapped, swapped), and later SIGHUP again with F unchanged (a version
 * already in the cache). For each reload: the worst latency of the answers that came within
 * 1 s either side of the swap (the server's "snapshot reloaded" line), and of all the answers
 * from the signal to 1 s after the swap, against the p99 of a window without a reload, in the
 * same run: the target is worst ≤ 5 × p99 + 50 ms. Start-up is timed too: spawn → "listening"
 * and → first answer, with an empty cache directory (a copy is made and verified) and with the
 * copy already there.
 *
 * With `--baseline DIR`, the same against the server of another checkout (the commit before
 * a change), in the same run, before this checkout's.
 *
 * Usage: `bun bench/reload.ts --a A.snap --b B.snap [--baseline DIR] [--before 10]
 * [--connections 16] [--out FILE.json]` (A and B: two snapshots of about the same size, e.g.
 * `snapshot generate --count 1000000 --seed 1` and `--seed 2`; the work files go beside A).
 * Take `flock /tmp/bench.lock` around it: the client and the server share the machine's cores.
 */
import { copyFileSync, linkSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { ROOT } from "./datasets.ts";
import { type MixRequest, cheapMixOf } from "./http.ts";
import { spawnServer } from "./server.ts";

/** One answer: when it came (performance.now()), how long it took, its status. */
interface Sample {
  end: number;
  ms: number;
  status: number;
}

/** Latency figures of a set of answers, in ms. */
interface Latency {
  answers: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  non200: number;
}

/** One server tree's figures. */
interface ReloadRecord {
  tree: string;
  rows: number;
  bytes: number;
  connections: number;
  startup: { cache: "empty" | "warm"; listeningMs: number; firstAnswerMs: number }[];
  /** The window without a reload. */
  before: Latency;
  reloads: {
    kind: "new version" | "cached version";
    /** SIGHUP → the "snapshot reloaded" line, in ms. */
    reloadMs: number;
    /** The server's own figures from that line (absent from older servers). */
    swapMs?: number;
    copyMs?: number;
    verifyMs?: number;
    copy?: string;
    /** Answers within 1 s either side of the swap. */
    swap: Latency;
    /** Answers from the signal to 1 s after the swap. */
    whole: Latency;
    /** 5 × p99 before + 50 ms. */
    bound_ms: number;
    pass: boolean;
  }[];
}

/** The latency figures of `samples`. */
function latency(samples: Sample[]): Latency {
  const ms = samples.map((s) => s.ms).sort((x, y) => x - y);
  const at = (q: number) => (ms.length === 0 ? 0 : ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]);
  return { answers: ms.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: ms.length === 0 ? 0 : ms[ms.length - 1], non200: samples.filter((s) => s.status !== 200).length };
}

/** A closed loop of `connections` clients replaying `requests`, each sending the next when its last answer came. */
function startLoad(url: string, requests: MixRequest[], connections: number): { samples: Sample[]; stop: () => Promise<void> } {
  const samples: Sample[] = [];
  let running = true;
  const loops = Array.from({ length: connections }, async (_, k) => {
    for (let i = k * 7919; running; i++) {
      const r = requests[i % requests.length];
      const started = performance.now();
      const response = await fetch(`${url}${r.target}`, {
        method: r.method,
        headers: r.body === undefined ? undefined : { "content-type": "application/json" },
        body: r.body === undefined ? undefined : JSON.stringify(r.body),
      });
      await response.arrayBuffer();
      const end = performance.now();
      samples.push({ end, ms: end - started, status: response.status });
    }
  });
  return {
    samples,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Resolves after `ms`. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Measures one server tree over A then B (see the file's comment). */
async function measure(tree: string, a: string, b: string, requests: MixRequest[], options: { beforeS: number; connections: number }, log: (line: string) => void): Promise<ReloadRecord> {
  const work = join(dirname(a), `reload-work-${tree === ROOT ? "this" : "baseline"}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const served = join(work, "served.snap");
  const next = join(work, "next.snap");
  const cache = join(work, "cache");
  // A stays linked beside the served name: replacing it by rename frees nothing (freeing GBs
  // is the kernel's work in the renaming process, the harness here), and the copies are on
  // the disk before any server starts (their writeback would be measured otherwise).
  copyFileSync(a, join(work, "a.snap"));
  linkSync(join(work, "a.snap"), served);
  copyFileSync(b, next);
  Bun.spawnSync(["sync"]);
  const { header, bytes } = loadSnapshot(a, { verify: false });
  const record: ReloadRecord = { tree, rows: header.rowCount, bytes, connections: options.connections, startup: [], before: latency([]), reloads: [] };
  let lines: { line: Record<string, unknown> | null; at: number }[] = [];
  const start = async (kind: "empty" | "warm") => {
    if (kind === "empty") rmSync(cache, { recursive: true, force: true });
    lines = [];
    const server = await spawnServer(served, { root: tree, args: ["--cache-dir", cache, "--no-demo"], timeoutMs: 600_000, onLine: (line, at) => lines.push({ line, at }) });
    const response = await fetch(`${server.url}/api/users?page=1&pageSize=10&sortBy=name&sortOrder=asc`);
    await response.arrayBuffer();
    const firstAnswerMs = performance.now() - server.spawnedAt;
    record.startup.push({ cache: kind, listeningMs: server.listeningMs, firstAnswerMs });
    log(`${tree}: start-up, cache ${kind}: listening ${server.listeningMs.toFixed(0)} ms, first answer ${firstAnswerMs.toFixed(0)} ms`);
    return server;
  };
  await (await start("empty")).stop();
  // the copy the first start made is on the disk before the next start
  Bun.spawnSync(["sync"]);
  const server = await start("warm");
  const load = startLoad(server.url, requests, options.connections);
  try {
    await pause(2000);
    const from = performance.now();
    await pause(options.beforeS * 1000);
    record.before = latency(load.samples.filter((s) => s.end >= from));
    const before = record.before;
    log(`${tree}: no reload, ${options.beforeS} s: ${before.answers} answers, p50 ${before.p50_ms.toFixed(2)} ms, p99 ${before.p99_ms.toFixed(2)} ms, max ${before.max_ms.toFixed(1)} ms`);
    for (const kind of ["new version", "cached version"] as const) {
      if (kind === "new version") renameSync(next, served);
      const seen = lines.length;
      const signalled = performance.now();
      process.kill(server.pid, "SIGHUP");
      let done: { line: Record<string, unknown> | null; at: number } | undefined;
      while (done === undefined) {
        done = lines.slice(seen).find((l) => l.line?.msg === "snapshot reloaded" || l.line?.msg === "reload failed; still serving the previous snapshot");
        if (done === undefined) await pause(5);
      }
      if (done.line?.msg !== "snapshot reloaded") throw new Error(`${tree}: the reload failed: ${JSON.stringify(done.line)}`);
      await pause(1000);
      const swappedAt = done.at;
      const swap = latency(load.samples.filter((s) => s.end >= swappedAt - 1000 && s.end <= swappedAt + 1000));
      const whole = latency(load.samples.filter((s) => s.end >= signalled && s.end <= swappedAt + 1000));
      const bound = 5 * before.p99_ms + 50;
      const line = done.line;
      const figure = (name: string) => (typeof line[name] === "number" ? (line[name] as number) : undefined);
      record.reloads.push({
        kind,
        reloadMs: swappedAt - signalled,
        swapMs: figure("swapMs"),
        copyMs: figure("copyMs"),
        verifyMs: figure("verifyMs"),
        copy: typeof line.copy === "string" ? line.copy : undefined,
        swap,
        whole,
        bound_ms: bound,
        pass: swap.max_ms <= bound,
      });
      log(
        `${tree}: reload to a ${kind}: ${(swappedAt - signalled).toFixed(0)} ms${line.swapMs === undefined ? "" : ` (copy ${line.copy} ${line.copyMs} ms, verify ${line.verifyMs} ms, swap ${line.swapMs} ms)`}; ` +
          `±1 s of the swap: ${swap.answers} answers, max ${swap.max_ms.toFixed(1)} ms (bound ${bound.toFixed(1)} ms: ${swap.max_ms <= bound ? "pass" : "FAIL"}); ` +
          `signal to swap + 1 s: p99 ${whole.p99_ms.toFixed(1)} ms, max ${whole.max_ms.toFixed(1)} ms; non-200 ${swap.non200 + whole.non200}`,
      );
      await pause(2000);
    }
  } finally {
    await load.stop();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return record;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      a: { type: "string" },
      b: { type: "string" },
      baseline: { type: "string" },
      before: { type: "string", default: "10" },
      connections: { type: "string", default: "16" },
      out: { type: "string" },
    },
  });
  if (values.a === undefined || values.b === undefined) throw new Error("usage: bun bench/reload.ts --a A.snap --b B.snap [--baseline DIR] [--before 10] [--connections 16] [--out FILE.json]");
  const { store } = loadSnapshot(values.a, { verify: false });
  // the partition is the status column: code 0 null, then its values
  const requests = cheapMixOf({ rows: store.rowCount, statusCounts: Array.from(store.partition?.counts.subarray(1) ?? []) });
  const options = { beforeS: Number(values.before), connections: Number(values.connections) };
  console.log(`# ${cpus().length} cores; the client (${options.connections} connections, closed loop) on the same machine; ${store.rowCount} rows`);
  const records: ReloadRecord[] = [];
  for (const tree of values.baseline === undefined ? [ROOT] : [values.baseline, ROOT]) records.push(await measure(tree, values.a, values.b, requests, options, (line) => console.log(line)));
  console.log(
    "\n| server | start-up, empty cache (listening / first answer) | start-up, warm cache | p99 without reload | reload to a new version: time; worst within 1 s of the swap; worst from the signal | reload to a cached version: the same | bound 5×p99+50 ms |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of records) {
    const [cold, warm] = r.startup;
    const cell = (k: number) => `${r.reloads[k].reloadMs.toFixed(0)} ms; ${r.reloads[k].swap.max_ms.toFixed(1)} ms ${r.reloads[k].pass ? "✓" : "✗"}; ${r.reloads[k].whole.max_ms.toFixed(1)} ms`;
    console.log(
      `| ${r.tree === ROOT ? "this checkout" : r.tree} | ${cold.listeningMs.toFixed(0)} / ${cold.firstAnswerMs.toFixed(0)} ms | ${warm.listeningMs.toFixed(0)} / ${warm.firstAnswerMs.toFixed(0)} ms | ${r.before.p99_ms.toFixed(2)} ms | ${cell(0)} | ${cell(1)} | ${r.reloads[0].bound_ms.toFixed(1)} ms |`,
    );
  }
  if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify(records, null, 2)}\n`);
}
