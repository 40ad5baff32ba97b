/**
 * Question: how fast does a live replica take changes, and what does compaction cost?
 *
 * On a dataset's snapshot (bench/datasets.ts), with the change set of bench/live-changes.ts (a
 * fraction of the rows, 1% by default, in batches of 1,000 changes):
 * - apply: changed rows a second through `applyChanges` (conversion, key lookups, records,
 *   trigram lists: what happens between requests), batch by batch;
 * - first reads: the first page of each sort order after the batches (the changed rows' ranks
 *   and places in that order, computed once, then kept);
 * - compaction: the version's rows folded into a new snapshot (publish/compact-file.ts: the
 *   table, the build, the write), its time and the process's peak RSS.
 *
 * Usage: bun bench/live.ts --rows 1m [--fraction 0.01]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { applyChanges, createEngine, executeQuery } from "../src/engine/execute.ts";
import { compactSnapshotFile } from "../src/publish/compact-file.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { datasetPaths, datasetReady, parseSize, sizeLabel } from "./datasets.ts";
import { changeBatches } from "./live-changes.ts";

const { values } = parseArgs({ options: { rows: { type: "string" }, fraction: { type: "string", default: "0.01" } } });
if (values.rows === undefined) {
  process.stderr.write("usage: bun bench/live.ts --rows 1m [--fraction 0.01]\n");
  process.exit(2);
}
const rows = parseSize(values.rows);
const fraction = Number(values.fraction);
const dataset = datasetPaths(rows);
if (!datasetReady(dataset)) throw new Error(`the ${sizeLabel(rows)} dataset is not built: run \`bun bench/datasets.ts ${sizeLabel(rows)}\``);

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50);

const { store } = loadSnapshot(dataset.snapshot);
const batches = changeBatches(store, fraction);
const changes = batches.reduce((n, b) => n + b.changes.length, 0);
let engine = createEngine(store);
const applyMs: number[] = [];
for (const batch of batches) {
  const t = performance.now();
  engine = applyChanges(engine, batch);
  applyMs.push(performance.now() - t);
}
const totalApply = applyMs.reduce((a, b) => a + b, 0);
const sortedApply = [...applyMs].sort((a, b) => a - b);
console.log(`${sizeLabel(rows)}: ${changes} changes in ${batches.length} batches applied in ${totalApply.toFixed(0)} ms: ${Math.round((changes / totalApply) * 1000)} changes/s; a batch of 1,000: p50 ${sortedApply[Math.floor(sortedApply.length / 2)].toFixed(2)} ms, max ${sortedApply[sortedApply.length - 1].toFixed(2)} ms`);
const live = engine.live;
console.log(`  live changed rows ${live?.live}, tombstoned base rows ${live?.deaths}`);

for (const sort of [
  [{ column: "id", direction: "asc" as const, absolute: false }],
  [{ column: "name", direction: "asc" as const, absolute: false }],
  [{ column: "email", direction: "desc" as const, absolute: false }],
  [
    { column: "status", direction: "asc" as const, absolute: false },
    { column: "name", direction: "desc" as const, absolute: false },
  ],
]) {
  const query = { filter: null, sort, offset: Math.floor(rows / 2), limit: 100 };
  let t = performance.now();
  executeQuery(engine, query);
  const first = performance.now() - t;
  t = performance.now();
  executeQuery(engine, { ...query, offset: query.offset + 100 });
  const second = performance.now() - t;
  console.log(`  first page at N/2 by ${sort.map((k) => `${k.column} ${k.direction}`).join(", ")}: ${first.toFixed(1)} ms the first time (ranks and places of the changed rows), ${(second * 1000).toFixed(0)} µs the next`);
}

const dir = mkdtempSync(join(tmpdir(), "users-live-bench-"));
try {
  Bun.gc(true);
  const before = process.memoryUsage().rss;
  peakRss = before;
  const t = performance.now();
  const written = await compactSnapshotFile(dataset.snapshot, batches, join(dir, "compacted.snap"));
  const ms = performance.now() - t;
  console.log(`  compaction of ${sizeLabel(rows)} rows + ${changes} changes: ${(ms / 1000).toFixed(1)} s, ${(written.bytes / 2 ** 20).toFixed(0)} MiB written; RSS ${(before / 2 ** 20).toFixed(0)} MiB before, peak ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
} finally {
  clearInterval(sampler);
  rmSync(dir, { recursive: true, force: true });
}
