/**
 * Question: how long from process start to the first answered request, and how much memory
 * does the server hold? Spawns `serve` over a dataset's snapshot, waits for "listening", sends
 * GET /api/users?sortBy=name (Q1) and reports the wall time from spawn to that answer, and the
 * server's RSS then (the snapshot is mmap'd: only the pages touched so far count).
 *
 * Usage: `bun bench/startup.ts 1m` (prints one line per run; 3 runs).
 */
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
  const rows = parseSize(process.argv[2] ?? "100k");
  const dataset = datasetPaths(rows);
  for (let i = 0; i < 3; i++) {
    const r = await measureStartup(dataset.snapshot);
    console.log(`${sizeLabel(rows)}: listening ${formatMs(r.listeningMs)}, first answer ${formatMs(r.firstAnswerMs)}, RSS ${(r.rssBytes / 2 ** 20).toFixed(0)} MiB`);
  }
}
