/**
 * Timing helpers shared by the benchmark's questions: nearest-rank quantiles and a
 * time-budgeted run loop (warm-up, then enough runs for a p99 on fast queries).
 */

/** Runs at most per series, and at least this many timed runs even when the budget is spent. */
export const MAX_RUNS = 1000;
export const MIN_RUNS = 3;
/** A run at least this long (ms) in the warm-up makes one timed run enough (10M-row full sorts of the slow peers). */
export const SLOW_RUN_MS = 10_000;
/** A first run at least this long (ms) is itself the one timed run: no warm-up (SQLite's 10M-row Q8 takes minutes). */
export const VERY_SLOW_RUN_MS = 60_000;
/** Warm-up: at most this many runs, and at most this share of the budget (at least one run). */
export const WARMUP_RUNS = 20;
export const WARMUP_SHARE = 0.25;

/** Latency figures of one series, in ms. */
export interface Summary {
  p50_ms: number;
  p99_ms: number;
  mean_ms: number;
  min_ms: number;
  max_ms: number;
  runs: number;
}

/** The nearest-rank q-quantile (0 < q ≤ 1) of ascending values. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1];
}

/** Summarizes durations in ms. */
export function summarize(times: number[]): Summary {
  const sorted = Float64Array.from(times).sort();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i];
  return {
    p50_ms: quantile(sorted, 0.5),
    p99_ms: quantile(sorted, 0.99),
    mean_ms: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    min_ms: sorted[0] ?? Number.NaN,
    max_ms: sorted[sorted.length - 1] ?? Number.NaN,
    runs: sorted.length,
  };
}

/**
 * Calls `step(run, timed)` for warm-up runs then timed runs, until MAX_RUNS timed runs, or the
 * budget is spent and MIN_RUNS timed runs are done (one, when a warm-up run took SLOW_RUN_MS; the
 * first run itself, without warm-up, when it took VERY_SLOW_RUN_MS). `run` counts every call (warm-up included),
 * so a caller can give each call a fresh input. `step` returns the duration it measured, in ms.
 */
export async function budgetLoop(budgetMs: number, step: (run: number, timed: boolean) => Promise<number>): Promise<number[]> {
  let run = 0;
  let slowest = 0;
  const warmStart = performance.now();
  for (let w = 0; w < WARMUP_RUNS; w++) {
    const ms = await step(run++, false);
    if (w === 0 && ms >= VERY_SLOW_RUN_MS) return [ms];
    slowest = Math.max(slowest, ms);
    if (performance.now() - warmStart >= budgetMs * WARMUP_SHARE) break;
  }
  const minRuns = slowest >= SLOW_RUN_MS ? 1 : MIN_RUNS;
  const times: number[] = [];
  const start = performance.now();
  while (times.length < MAX_RUNS) {
    times.push(await step(run++, true));
    if (times.length >= minRuns && performance.now() - start >= budgetMs) break;
  }
  return times;
}

/** Formats ms for tables: 3 significant digits, µs below 1 ms. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  if (ms < 1) return `${(ms * 1000).toPrecision(3)}µs`;
  if (ms < 1000) return `${ms.toPrecision(3)}ms`;
  return `${(ms / 1000).toPrecision(3)}s`;
}
