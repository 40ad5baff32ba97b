/**
 * Question: what do change events cost a live replica, and how soon does a listener hear of a
 * batch? (docs/api.md "GET /api/users/changes")
 *
 * 1. In one process, on a dataset's snapshot with bench/live-changes.ts's batches of 1,000
 *    changes (a second's worth at 1,000 changes/s): the time to apply a batch, and the feed's
 *    time to work out the changed keys per batch — for a role that sees everything (no query),
 *    and for 1 and 10 roles limited to some rows and columns (two engine queries per role and
 *    batch) — as a ratio of the apply time.
 * 2. A replica as a process (`serve --source DIR --poll 0.1` on the same snapshot, published at
 *    an LSN): its RSS with no stream and with `--streams` streams open (default 1,000), then
 *    batches of 50 changes published 20 times a second (1,000 changes/s) for `--seconds`, and
 *    for each batch, the time from its publication (the manifest naming it) to its event at
 *    each of 10 listeners: p50, p99, max. The replica polls every 0.1 s: that is most of it.
 *
 * Usage: BUN_CONFIG_MAX_HTTP_REQUESTS=2000 bun bench/live-events.ts --rows 1m [--streams 1000] [--seconds 20] [--only feed|replica]
 * (Bun's fetch opens at most 256 connections at once unless told more: the streams are fetches.)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pino from "pino";
import type { RoleView } from "../src/access/view.ts";
import { type Engine, applyChanges, createEngine } from "../src/engine/execute.ts";
import { createChangeFeed } from "../src/events/change-feed.ts";
import { compileColumnModel } from "../src/kinds/operators.ts";
import { KINDS } from "../src/kinds/registry.ts";
import { type BatchEntry, batchKey, sha256Hex } from "../src/live/batches.ts";
import { type Change, encodeBatch, lsnText } from "../src/live/changes.ts";
import { publishBatch, publishSnapshot } from "../src/publish/publish.ts";
import { columnSpec } from "../src/schema/kinds.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { projectionOf } from "../src/store/record-fields.ts";
import { recordAt } from "../src/store/rows-json.ts";
import { datasetPaths, datasetReady, parseSize, sizeLabel } from "./datasets.ts";
import { changeBatches } from "./live-changes.ts";

const { values } = parseArgs({ options: { rows: { type: "string" }, streams: { type: "string", default: "1000" }, seconds: { type: "string", default: "20" }, only: { type: "string" } } });
if (values.rows === undefined) {
  process.stderr.write("usage: bun bench/live-events.ts --rows 1m [--streams 1000] [--seconds 20]\n");
  process.exit(2);
}
const rows = parseSize(values.rows);
const streamCount = Number(values.streams);
const seconds = Number(values.seconds);
const dataset = datasetPaths(rows);
if (!datasetReady(dataset)) throw new Error(`the ${sizeLabel(rows)} dataset is not built: run \`bun bench/datasets.ts ${sizeLabel(rows)}\``);

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

// ---- 1. in one process ------------------------------------------------------------------------
const { store } = loadSnapshot(dataset.snapshot);
const schema = store.schema;
/** A role limited to the rows whose `column` set filter holds `values`, seeing id, name and status. */
const roleOf = (name: string, column: string, vals: string[]): RoleView => {
  const spec = columnSpec(schema, column);
  if (spec === undefined) throw new Error(`no column ${column}`);
  const test = compileColumnModel(KINDS[spec.kind], spec, { filterType: "set", values: vals }, `/${column}`, (_at, detail) => {
    throw new Error(detail);
  });
  if (test === null) throw new Error("no test");
  const ids = ["id", "name", "status"];
  return {
    role: name,
    base: schema,
    schema: { columns: schema.columns.filter((c) => ids.includes(c.id)), key: schema.key, partition: schema.partition },
    projection: projectionOf(schema, ids),
    filter: { kind: "column", column, test },
    searchColumns: null,
    tag: name,
    unrestricted: false,
  };
};
const logger = pino({ level: "silent" });
const batches = changeBatches(store, 0.01).slice(0, 10);
const setups: { label: string; views: (RoleView | null)[] }[] = [
  { label: "every row (no access control)", views: [null] },
  { label: "1 role of some rows", views: [roleOf("actives", "status", ["active"])] },
  { label: "10 roles of some rows", views: Array.from({ length: 10 }, (_, i) => roleOf(`r${i}`, i % 2 === 0 ? "status" : "id", i % 2 === 0 ? ["active"] : Array.from({ length: 100 }, (_, k) => String(k * 7919 + i)))) },
];
console.log(`${sizeLabel(rows)}: ${batches.length} batches of ${batches[0].changes.length} changes`);
console.log("| roles streaming | apply per batch (ms, median) | feed per batch (ms, median) | feed / apply |");
console.log("|---|---|---|---|");
for (const setup of values.only === "replica" ? [] : setups) {
  const feed = createChangeFeed({ logger });
  let engine: Engine = createEngine(store);
  const aborts: AbortController[] = [];
  const readers: Promise<void>[] = [];
  for (const view of setup.views) {
    const abort = new AbortController();
    aborts.push(abort);
    const body = feed.open(engine, view, null, abort.signal).body as ReadableStream<Uint8Array>;
    readers.push((async () => {
      const reader = body.getReader();
      while (!(await reader.read()).done) {}
    })().catch(() => {}));
  }
  const applyMs: number[] = [];
  const feedMs: number[] = [];
  for (const batch of batches) {
    const t0 = performance.now();
    const prepared = feed.prepare(engine, batch);
    const t1 = performance.now();
    const next = applyChanges(engine, batch);
    const t2 = performance.now();
    feed.applied(prepared, next);
    const t3 = performance.now();
    engine = next;
    applyMs.push(t2 - t1);
    feedMs.push(t1 - t0 + (t3 - t2));
    await new Promise((resolve) => setImmediate(resolve));
  }
  feed.close();
  await Promise.all(readers);
  const a = quantile([...applyMs].sort((x, y) => x - y), 0.5);
  const f = quantile([...feedMs].sort((x, y) => x - y), 0.5);
  console.log(`| ${setup.label} | ${a.toFixed(1)} | ${f.toFixed(1)} | ${(f / a).toFixed(2)} |`);
}

// ---- 2. a replica as a process ----------------------------------------------------------------
if (values.only === "feed") process.exit(0);
if (streamCount > Number(process.env.BUN_CONFIG_MAX_HTTP_REQUESTS ?? 256)) throw new Error(`set BUN_CONFIG_MAX_HTTP_REQUESTS to ${streamCount} or more: Bun's fetch opens at most that many connections at once`);
const dir = mkdtempSync(join(tmpdir(), "bench-live-events-"));
const location = join(dir, "published");
let lsn = 0x1000;
const nextLsn = () => lsnText((lsn += 0x100));
await publishSnapshot(dataset.snapshot, location, new Date(), {}, nextLsn());
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const child = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "cli.ts"), "serve", "--source", location, "--poll", "0.1", "--port", "0", "--no-demo", "--cache-dir", join(dir, "cache"), "--max-event-streams", String(streamCount + 10)], {
  env: { ...process.env, LOG_LEVEL: "info" },
  stdout: "ignore",
  stderr: "pipe",
});
// the replica goes with this process, whatever happens
process.on("exit", () => child.kill("SIGKILL"));
let url = "";
{
  const reader = child.stderr.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let ready = false;
  while (!ready || url === "") {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the replica exited: ${text}`);
    text += decoder.decode(value, { stream: true });
    for (const line of text.split("\n")) {
      if (line.includes('"msg":"HTTP envelope"')) ready = true;
      const m = /"url":"([^"]+)","msg":"listening"/.exec(line);
      if (m !== null) url = m[1];
    }
  }
  void (async () => {
    while (!(await reader.read()).done) {}
  })();
}
const settle = async () => {
  Bun.gc(true);
  await fetch(`${url}/healthz`).then((r) => r.arrayBuffer());
  await Bun.sleep(500);
};
await settle();
const rssBefore = rssOf(child.pid);
/** Per listener: when each version's change event arrived (performance.now()). */
const heard: Map<string, number>[] = [];
const aborts: AbortController[] = [];
for (let i = 0; i < streamCount; i++) {
  const abort = new AbortController();
  aborts.push(abort);
  const response = await fetch(`${url}/api/users/changes`, { signal: abort.signal });
  const listener = i < 10 ? new Map<string, number>() : null;
  if (listener !== null) heard.push(listener);
  void (async () => {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (listener === null) continue;
      const now = performance.now();
      for (const m of decoder.decode(value, { stream: true }).matchAll(/event: change\ndata: \{"version":"[^"@]*@([^"]+)"/g)) listener.set(m[1], now);
    }
  })().catch(() => {});
}
await settle();
const rssOpen = rssOf(child.pid);
console.log(`\nreplica of ${sizeLabel(rows)}: RSS ${(rssBefore / 2 ** 20).toFixed(0)} MiB with no stream, ${(rssOpen / 2 ** 20).toFixed(0)} MiB with ${streamCount} streams open: +${((rssOpen - rssBefore) / 2 ** 20).toFixed(1)} MiB`);

// 1,000 changes/s: a batch of 50 updates every 50 ms, each published (the manifest names it) at a known time
const published = new Map<string, number>();
const total = seconds * 20;
let nextId = 1;
for (let b = 0; b < total; b++) {
  const due = performance.now() + 50;
  const changes: Change[] = [];
  for (let k = 0; k < 50; k++) {
    const record = recordAt(store, nextId++ % store.rowCount);
    record.name = `renamed ${b}.${k}`;
    changes.push({ op: "upsert", record });
  }
  const firstLsn = nextLsn();
  const last = nextLsn();
  const bytes = encodeBatch({ lsn: last, commitTime: Date.now(), changes });
  const entry: BatchEntry = { key: batchKey(firstLsn, last), firstLsn, lsn: last, commitTime: new Date().toISOString(), changes: changes.length, bytes: bytes.length, sha256: sha256Hex(bytes) };
  await publishBatch(location, entry, bytes);
  published.set(last, performance.now());
  const wait = due - performance.now();
  if (wait > 0) await Bun.sleep(wait);
}
// every listener hears of the last batch (an event, not a time)
const lastLsn = [...published.keys()].at(-1) as string;
while (!heard.every((listener) => listener.has(lastLsn))) await Bun.sleep(20);
const delays: number[] = [];
let missing = 0;
for (const listener of heard) {
  for (const [at, time] of published) {
    const when = listener.get(at);
    if (when === undefined) missing++;
    else delays.push(when - time);
  }
}
delays.sort((a, b) => a - b);
console.log(`${total} batches of 50 changes at 20 a second (1,000 changes/s), ${heard.length} listeners of ${streamCount} streams: publication → event p50 ${quantile(delays, 0.5).toFixed(0)} ms, p99 ${quantile(delays, 0.99).toFixed(0)} ms, max ${delays[delays.length - 1].toFixed(0)} ms; events not heard: ${missing}`);
console.log(`RSS at the end: ${(rssOf(child.pid) / 2 ** 20).toFixed(0)} MiB`);
for (const abort of aborts) abort.abort();
child.kill("SIGTERM");
await child.exited;
rmSync(dir, { recursive: true, force: true });
process.exit(0);
