/**
 * Question: how long does each query class take on one engine at one row count, and does the
 * engine give our answers? Runs one engine over one dataset in its own process (so its RSS and
 * its garbage are its own): open (timed), first query, then the checks against our expected
 * answers, then every series of bench/queries.ts, time-budgeted.
 *
 * Usage: `bun bench/latency.ts --engine sqlite --rows 100k [--budget 2000] [--series "Q1,Q3 first"]
 *   [--expect FILE | --check FILE] [--out FILE]`. `--expect` writes the engine's answers to the
 * checks (ours), `--check` compares against such a file; a series whose class has a mismatch is
 * reported and not timed. Without `--out`, prints a table.
 */
import { parseArgs } from "node:util";
import { writeFileSync, readFileSync } from "node:fs";
import type { BenchQueryShape as Query } from "./query-model.ts";
import { datasetPaths, datasetReady, parseSize, readNeedles, readStats, sizeLabel } from "./datasets.ts";
import type { Answer, BenchEngine, OpenReport } from "./engines/engine.ts";
import { type Summary, budgetLoop, formatMs, summarize } from "./measure.ts";
import {
  type BenchQuery,
  CHECK_NEEDLES,
  type QueryClass,
  REPEAT_NEEDLES,
  SERIES,
  SESSION_BLOCKS,
  type Series,
  checkQueries,
  describeQuery,
  fixedQuery,
  freshNeedle,
  needlesOf,
  q3,
  q5,
  q7,
} from "./queries.ts";

/** The engines, by module name (bench/engines/<name>.ts exports an object of that name). */
export const ENGINE_NAMES = ["ours", "sqlite", "duckdb", "arquero", "naive", "orama", "postgres", "oursLive", "oursCompacted"] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** One answer as the checks keep it. */
export interface ExpectedAnswer {
  total: number;
  ids: number[];
  /** The window's records, each as `[id, name, email, status]`. */
  records: unknown[][];
}

/** One timed series' result. */
export interface SeriesResult extends Partial<Summary> {
  query: string;
  /** "ok", "mismatch: …", "different semantics", or "error: …". */
  check: string;
  /** Median of the totals the timed runs returned (matching rows). */
  total_p50?: number;
}

/** What one worker run reports. */
export interface LatencyReport {
  engine: string;
  rows: number;
  note: string;
  semantics: "same" | "different";
  skipped?: string;
  open?: OpenReport;
  /** Time of the first query after opening (Q1), in ms. */
  firstQueryMs?: number;
  /** RSS after opening and the first query, and at the end, in bytes. */
  rssOpenBytes?: number;
  rssEndBytes?: number;
  /** Check results: queries compared and what differed. */
  checks?: { compared: number; matched: number; mismatches: string[] };
  series: SeriesResult[];
}

/** Runs one query and measures it: the answer and the elapsed ms. */
async function timed(engine: BenchEngine, query: Query): Promise<{ answer: Answer; ms: number }> {
  const start = performance.now();
  const result = engine.run(query);
  const answer = result instanceof Promise ? await result : result;
  return { answer, ms: performance.now() - start };
}

/** An answer in the checks' form. */
function expectedOf(answer: Answer): ExpectedAnswer {
  const text = typeof answer.body === "string" ? answer.body : new TextDecoder().decode(answer.body);
  const records = (JSON.parse(text) as { id: number; name: string; email: string; status: string }[]).map((r) => [r.id, r.name, r.email, r.status]);
  return { total: answer.total, ids: Array.from(answer.ids), records };
}

/** What differs between an answer and the expected one, or null. */
function difference(expected: ExpectedAnswer, got: ExpectedAnswer): string | null {
  if (got.total !== expected.total) return `total ${got.total}, ours ${expected.total}`;
  if (got.ids.length !== expected.ids.length) return `${got.ids.length} rows, ours ${expected.ids.length}`;
  for (let i = 0; i < got.ids.length; i++) {
    if (got.ids[i] !== expected.ids[i]) return `row ${i}: id ${got.ids[i]}, ours ${expected.ids[i]}`;
  }
  for (let i = 0; i < got.records.length; i++) {
    if (JSON.stringify(got.records[i]) !== JSON.stringify(expected.records[i])) {
      return `row ${i}: record ${JSON.stringify(got.records[i])}, ours ${JSON.stringify(expected.records[i])}`;
    }
  }
  return null;
}

/** Median of numbers. */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Times one series (or, for Q7, both of its series). */
async function timeSeries(
  engine: BenchEngine,
  series: Series,
  ctx: { stats: ReturnType<typeof readStats>; needles: ReturnType<typeof readNeedles> },
  budgetMs: number,
): Promise<SeriesResult[]> {
  const totals: number[] = [];
  // Totals of every run, warm-up included (a run of over a minute is timed without warm-up).
  const measure = async (query: Query) => {
    const { answer, ms } = await timed(engine, query);
    totals.push(answer.total);
    return ms;
  };
  const result = (name: string, times: number[]): SeriesResult => ({ query: name, check: "ok", ...summarize(times), total_p50: median(totals) });

  if (series.kind === "fixed") {
    const query = fixedQuery(series.cls, ctx.stats);
    return [result(series.name, await budgetLoop(budgetMs, () => measure(query)))];
  }
  if (series.kind === "first" || series.kind === "repeat") {
    const cls = series.cls as "Q3" | "Q5";
    const list = needlesOf(cls, ctx.needles);
    const make = cls === "Q3" ? q3 : q5;
    if (series.kind === "first") {
      const times = await budgetLoop(budgetMs, (run) => {
        engine.fresh();
        return measure(make(freshNeedle(list, run)));
      });
      return [result(series.name, times)];
    }
    const repeated = list.slice(0, Math.min(REPEAT_NEEDLES, list.length));
    for (const needle of repeated) await timed(engine, make(needle));
    return [result(series.name, await budgetLoop(budgetMs, (run) => measure(make(repeated[run % repeated.length]))))];
  }
  // Q7 sessions: both series from one loop.
  const list = needlesOf("Q7", ctx.needles);
  const first: number[] = [];
  const rest: number[] = [];
  const firstTotals: number[] = [];
  // The last session's block times: the timed ones when a session of over a minute is timed without warm-up.
  let last: number[] = [];
  const sessions = await budgetLoop(budgetMs * 2, async (run, t) => {
    engine.fresh();
    const needle = freshNeedle(list, run);
    last = [];
    for (let b = 0; b < SESSION_BLOCKS; b++) {
      const { answer, ms } = await timed(engine, q7(needle, b));
      last.push(ms);
      if (b === 0) firstTotals.push(answer.total);
    }
    if (t) {
      first.push(last[0]);
      rest.push(...last.slice(1));
    }
    return last.reduce((a, b) => a + b, 0);
  });
  if (first.length === 0 && sessions.length === 1) {
    first.push(last[0]);
    rest.push(...last.slice(1));
  }
  const totalP50 = median(firstTotals);
  return [
    { query: "Q7 block 0", check: "ok", ...summarize(first), total_p50: totalP50 },
    { query: "Q7 blocks 1-9", check: "ok", ...summarize(rest), total_p50: totalP50 },
  ];
}

/** Runs the whole worker: open, first query, checks, series. */
export async function runLatency(options: {
  engine: EngineName;
  rows: number;
  budgetMs: number;
  series?: string[];
  expectPath?: string;
  checkPath?: string;
  log: (line: string) => void;
}): Promise<LatencyReport> {
  const { log } = options;
  const dataset = datasetPaths(options.rows);
  if (!datasetReady(dataset)) throw new Error(`the ${sizeLabel(options.rows)} dataset is not built: run \`bun bench/datasets.ts ${sizeLabel(options.rows)}\``);
  const file = options.engine === "oursLive" || options.engine === "oursCompacted" ? "ours-live" : options.engine;
  const module = (await import(`./engines/${file}.ts`)) as Record<string, BenchEngine>;
  const engine = module[options.engine];
  const report: LatencyReport = { engine: engine.name, rows: options.rows, note: engine.note, semantics: engine.semantics, series: [] };
  if (options.rows > engine.maxRows) {
    report.skipped = `run at ${sizeLabel(engine.maxRows)} rows at most`;
    return report;
  }
  const stats = readStats(dataset);
  const needles = readNeedles(dataset);

  log(`${engine.name} ${sizeLabel(options.rows)}: opening`);
  report.open = await engine.open(dataset);
  const first = await timed(engine, fixedQuery("Q1", stats));
  report.firstQueryMs = first.ms;
  Bun.gc(true);
  report.rssOpenBytes = process.memoryUsage().rss;
  log(`${engine.name} ${sizeLabel(options.rows)}: read ${formatMs(report.open.readMs)}, build ${formatMs(report.open.buildMs)}, first query ${formatMs(first.ms)}`);

  // Checks, before any timing.
  const checks: BenchQuery[] = checkQueries(stats, needles);
  const expected: Record<string, ExpectedAnswer> | null = options.checkPath ? JSON.parse(readFileSync(options.checkPath, "utf8")).answers : null;
  const answers: Record<string, ExpectedAnswer> = {};
  const badClasses = new Map<QueryClass, string>();
  const mismatches: string[] = [];
  let matched = 0;
  for (const check of checks) {
    let got: ExpectedAnswer;
    try {
      engine.fresh();
      got = expectedOf((await timed(engine, check.query)).answer);
    } catch (error) {
      const message = `error: ${(error as Error).message}`;
      if (!badClasses.has(check.cls)) badClasses.set(check.cls, message);
      mismatches.push(`${check.key}: ${message}`);
      continue;
    }
    answers[check.key] = got;
    if (expected === null) continue;
    const want = expected[check.key];
    const diff = want === undefined ? "no expected answer" : difference(want, got);
    if (diff === null) matched++;
    else {
      mismatches.push(`${check.key}: ${diff} (${describeQuery(check.query)})`);
      if (!badClasses.has(check.cls)) badClasses.set(check.cls, `mismatch: ${check.key}: ${diff}`);
    }
  }
  if (options.expectPath) writeFileSync(options.expectPath, JSON.stringify({ engine: engine.name, rows: options.rows, answers }));
  if (expected !== null) report.checks = { compared: checks.length, matched, mismatches };
  if (mismatches.length > 0) log(`${engine.name} ${sizeLabel(options.rows)}: ${mismatches.length} check(s) differ: ${mismatches.slice(0, 3).join("; ")}`);

  const wanted = options.series;
  for (const series of SERIES) {
    if (series.kind === "session-rest") continue; // timed with "session-first"
    const names = series.kind === "session-first" ? ["Q7 block 0", "Q7 blocks 1-9"] : [series.name];
    if (wanted !== undefined && !names.some((n) => wanted.includes(n) || wanted.includes(series.cls))) continue;
    const bad = badClasses.get(series.cls);
    if (bad !== undefined && engine.semantics === "same") {
      for (const name of names) report.series.push({ query: name, check: bad });
      continue;
    }
    const check = engine.semantics === "different" ? "different semantics" : expected === null ? "reference" : "ok";
    try {
      const results = await timeSeries(engine, series, { stats, needles }, options.budgetMs);
      for (const r of results) {
        r.check = check;
        report.series.push(r);
        log(`${engine.name} ${sizeLabel(options.rows)} ${r.query}: p50 ${formatMs(r.p50_ms ?? Number.NaN)} p99 ${formatMs(r.p99_ms ?? Number.NaN)} (${r.runs} runs)`);
      }
    } catch (error) {
      for (const name of names) report.series.push({ query: name, check: `error: ${(error as Error).message}` });
    }
  }
  report.rssEndBytes = process.memoryUsage().rss;
  await engine.close();
  return report;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      engine: { type: "string" },
      rows: { type: "string" },
      budget: { type: "string", default: "2000" },
      series: { type: "string" },
      expect: { type: "string" },
      check: { type: "string" },
      out: { type: "string" },
    },
  });
  const name = values.engine as EngineName;
  if (!ENGINE_NAMES.includes(name) || values.rows === undefined) {
    process.stderr.write(`usage: bun bench/latency.ts --engine ${ENGINE_NAMES.join("|")} --rows 100k [--budget ms] [--series list] [--expect f | --check f] [--out f]\n`);
    process.exit(2);
  }
  const report = await runLatency({
    engine: name,
    rows: parseSize(values.rows),
    budgetMs: Number(values.budget),
    series: values.series?.split(",").map((s) => s.trim()),
    expectPath: values.expect,
    checkPath: values.check,
    log: (line) => process.stderr.write(`  ${line}\n`),
  });
  if (values.out) writeFileSync(values.out, JSON.stringify(report, null, 2));
  else {
    console.table(
      report.series.map((s) => ({ query: s.query, p50: formatMs(s.p50_ms ?? Number.NaN), p99: formatMs(s.p99_ms ?? Number.NaN), runs: s.runs ?? 0, matches: s.total_p50 ?? "", check: s.check })),
    );
  }
  // Native handles (DuckDB) may keep the process alive.
  process.exit(0);
}
