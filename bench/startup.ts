/**
 * Question: how long from process start to the first answered request, and how much memory
 * does the server hold? Spawns `serve` over a dataset's snapshot, waits for "listening", sends
 * GET /api/users?sortBy=name (Q1) and reports the wall time from spawn to that answer, and the
 * server's RSS then (the snapshot is mmap'd: only the pages touched so far count).
 *
 * The server maps a private copy of the snapshot (src/snapshot/private-copy.ts), made on the
 * first start and reused on the next: each size is measured both ways, "copy" with the cache
 * directory emptied before the start, "reuse" with the copy already there.
 *
 * Usage: `bun bench/startup.ts 1m` (a benchmark dataset), or `bun bench/startup.ts FILE.snap`;
 * prints one line per run, 3 runs of each kind.
 */
import { rmSync } from "node:fs";
import { defaultCacheDir } from "../src/snapshot/private-copy.ts";
import { datasetPaths, parseSize, sizeLabel } from "./datasets.ts";
import { formatMs } from "./measure.ts";
import { rssOf, spawnServer } from "./server.ts";

/** One start-up measurement. */
export interface StartupResult {
  /** Spawn → "listening" logged, in ms. */
  listeningMs: number;
  /** Spawn → first /api/users answer received, in ms. */
  firstAnswerMs: number;
  /** Server RSS after the first answer, in bytes. */
  rssBytes: number;
}

/** Starts the server over `snapshot`, asks Q1 once, stops it. */
export async function measureStartup(snapshot: string): Promise<StartupResult> {
  const server = await spawnServer(snapshot);
  try {
    const response = await fetch(`${server.url}/api/users?page=1&pageSize=10&sortBy=name&sortOrder=asc`);
    await response.arrayBuffer();
    const firstAnswerMs = performance.now() - server.spawnedAt;
    if (response.status !== 200) throw new Error(`first request answered ${response.status}`);
    return { listeningMs: server.listeningMs, firstAnswerMs, rssBytes: rssOf(server.pid) };
  } finally {
    await server.stop();
  }
}

if (import.meta.main) {
  const arg = process.argv[2] ?? "100k";
  const snapshot = arg.endsWith(".snap") ? arg : datasetPaths(parseSize(arg)).snapshot;
  const label = arg.endsWith(".snap") ? arg : sizeLabel(parseSize(arg));
  for (const kind of ["copy", "reuse"] as const) {
    for (let i = 0; i < 3; i++) {
      if (kind === "copy") rmSync(defaultCacheDir(snapshot), { recursive: true, force: true });
      const r = await measureStartup(snapshot);
      console.log(`${label} (${kind}): listening ${formatMs(r.listeningMs)}, first answer ${formatMs(r.firstAnswerMs)}, RSS ${(r.rssBytes / 2 ** 20).toFixed(0)} MiB`);
    }
  }
}
