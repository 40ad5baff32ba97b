/**
 * `npm run bench`: how fast is this service, against what, and how does its cost grow with the
 * row count? Orchestrates the questions of bench/ for each dataset size:
 *
 * 1. datasets.ts: the cached datasets (built in a child process when missing);
 * 2. latency.ts, one process per engine: ours first (its answers are the expected ones), then
 *    each peer, checked against ours before it is timed;
 * 3. startup.ts: our server from spawn to the first answered request;
 * 4. http.ts: wrk against a raw Bun.serve and our server;
 * 5. report.ts: the table, bench/results/latest.{json,md} and bench/results/latency.svg
 *    (written after every size, so a long run keeps what it measured).
 *
 * Options: --sizes 10k,100k,1m,10m  --engines ours,sqlite,duckdb,arquero,naive,orama
 *   --budget <ms per series> (default 2000)  --http / --no-http  --http-sizes <sizes>
 *   --http-duration <s> (default 10)  --http-peer postgres (also the PostgreSQL HTTP peer on the
 *   cheap and substring mixes, bench/pg-server.ts)  --quick (100k, short budgets, under a minute)  --rebuild
 */
import { readFileSync, rmSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  AUTO_REBUILD_ROWS,
  ROOT,
  cacheDir,
  cacheKey,
  ensureDataset,
  parseSize,
  pruneStaleCaches,
  readBuildReport,
  sizeLabel,
} from "./datasets.ts";
import { WRK_HINT, haveWrk, runHttp } from "./http.ts";
import { ENGINE_NAMES, type EngineName, type LatencyReport } from "./latency.ts";
import { type AnyRecord, type BuildRecord, type LatencyRecord, RESULTS_DIR, type Results, renderText, writeResults } from "./report.ts";
import { type StartupResult, measureStartup } from "./startup.ts";

const HELP = `usage: bun bench/run.ts [options]   (npm run bench -- [options])
  --sizes <list>          dataset sizes, e.g. 10k,100k,1m,10m (default 10k,100k,1m)
  --engines <list>        ${ENGINE_NAMES.join(",")} (default all; ours always runs, as the reference)
  --budget <ms>           time budget per timed series and engine (default 2000)
  --http | --no-http      run the wrk HTTP scenarios (default on; needs wrk)
  --http-sizes <list>     sizes for HTTP (default: every size)
  --http-duration <s>     seconds per wrk run (default 10)
  --http-peer postgres    also run PostgreSQL behind a plain handler (bench/pg-server.ts) and ours on the cheap and substring mixes
  --quick                 100k only, no Orama, budget 150 ms, HTTP runs of 2 s: about a minute
  --rebuild               rebuild the cached snapshots (and peer files)
  --merge                 keep the records of other sizes from the last results/latest.json
  --help`;

const { values } = parseArgs({
  options: {
    sizes: { type: "string" },
    engines: { type: "string" },
    budget: { type: "string" },
    http: { type: "boolean" },
    "no-http": { type: "boolean" },
    "http-sizes": { type: "string" },
    "http-duration": { type: "string" },
    "http-peer": { type: "string" },
    quick: { type: "boolean" },
    rebuild: { type: "boolean" },
    merge: { type: "boolean" },
    help: { type: "boolean" },
  },
});
if (values.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}

const quick = values.quick === true;
const sizes = (values.sizes ?? (quick ? "100k" : "10k,100k,1m")).split(",").map(parseSize);
// --quick leaves Orama out unless asked for: its 100k build alone takes most of a minute.
// the live replica's engines are a question of their own (bench/live.ts)
const defaultEngines = ENGINE_NAMES.filter((e) => e !== "oursLive" && e !== "oursCompacted" && !(quick && e === "orama"));
const engines = (values.engines ?? defaultEngines.join(",")).split(",").map((e) => e.trim()) as EngineName[];
for (const e of engines) {
  if (!ENGINE_NAMES.includes(e)) {
    process.stderr.write(`unknown engine ${e}; known: ${ENGINE_NAMES.join(", ")}\n`);
    process.exit(2);
  }
}
const budgetMs = Number(values.budget ?? (quick ? 150 : 2000));
let http = values["no-http"] !== true;
const httpSizes = values["http-sizes"] ? values["http-sizes"].split(",").map(parseSize) : sizes;
const httpDuration = Number(values["http-duration"] ?? (quick ? 2 : 10));
const httpPeer = values["http-peer"];
if (httpPeer !== undefined && httpPeer !== "postgres") {
  process.stderr.write(`unknown --http-peer ${httpPeer}; known: postgres\n`);
  process.exit(2);
}
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
if (http && !haveWrk()) {
  if (values.http === true) {
    process.stderr.write(`${WRK_HINT}\n`);
    process.exit(1);
  }
  log(`${WRK_HINT}; skipping the HTTP scenarios`);
  http = false;
}

const key = cacheKey();
for (const removed of pruneStaleCaches(key)) log(`removed the stale cache bench/.cache/${removed}`);

const notes = [
  "Each engine runs in its own process per size; one timed request = count + page as JSON records (serialization included on every engine).",
  "Peers get help in their favour: folded lower-case columns for matching and integer collation-rank columns (from our snapshot's rankByRow) for ordering, so their ORDER BY gives exactly our order. PostgreSQL gets the folded columns only: it orders the real strings under an ICU collation (bench/results/postgres.md).",
  "Before timing, each engine's totals, page ids and records are checked against ours on every query class; a class with a mismatch is reported, not timed.",
  "Q3/Q5 first: each run takes the next needle of a list of a few hundred frequent 3-letter strings (cycled), and ours gets a new engine (empty caches) before each run; the peers keep no result cache. Q3/Q5 repeat: 3 needles asked again and again.",
  "Q7: AG Grid sessions of 10 blocks of 100 rows over one filter and sort; each session a new needle and (ours) a new engine; block 0 and blocks 1-9 reported apart.",
  `Timing: performance.now() per request; warm-up of up to 20 runs; then up to 1000 runs or ${budgetMs} ms (at least 3 runs; 1 when a run takes over 10 s; a first run over 60 s is the one timed run, without warm-up). p99 is the nearest-rank quantile (with few runs, the maximum).`,
  `This machine has ${cpus().length} cores shared with other work (tests may run at the same time): figures are noisy.`,
  "Orama runs at 100k rows at most, with different semantics (tokenized prefix search, its own string order): timed, not checked.",
  "The in-process series repeat one window (warm CPU caches); the HTTP mixes use random offsets, which touch rows all over the snapshot, so a request costs more there.",
];

const records: AnyRecord[] = [];
const engineNotes: Record<string, string> = {};
/** With --merge: the last run's records of the sizes this run does not measure. */
const kept: AnyRecord[] = [];
let keptSizes: number[] = [];
if (values.merge === true) {
  try {
    const last = JSON.parse(readFileSync(join(RESULTS_DIR, "latest.json"), "utf8")) as Results;
    keptSizes = last.meta.sizes.filter((n) => !sizes.includes(n));
    kept.push(...last.records.filter((r) => keptSizes.includes(r.rows)));
    Object.assign(engineNotes, last.meta.engine_notes);
    if (keptSizes.length > 0) notes.push(`Sizes ${keptSizes.map(sizeLabel).join(", ")} are kept from the run of ${last.meta.date} (--merge).`);
  } catch (error) {
    log(`--merge: no previous results (${(error as Error).message})`);
  }
}
const results = (): Results => ({
  meta: {
    date: new Date().toISOString(),
    bun: Bun.version,
    cpus: cpus().length,
    memory_gib: Math.round(totalmem() / 2 ** 30),
    sizes: [...keptSizes, ...sizes].sort((a, b) => a - b),
    engines: ["ours", ...engines.filter((e) => e !== "ours")],
    budget_ms: budgetMs,
    http_duration_s: http ? httpDuration : null,
    notes,
    engine_notes: engineNotes,
  },
  records: [...kept, ...records],
});

/** Runs one latency worker; returns its report, or null when it failed. */
async function worker(engine: EngineName, rows: number, args: string[]): Promise<LatencyReport | null> {
  const out = join(cacheDir(key), `latency-${engine}-${sizeLabel(rows)}.json`);
  rmSync(out, { force: true });
  const child = Bun.spawn([process.execPath, join(ROOT, "bench", "latency.ts"), "--engine", engine, "--rows", String(rows), "--budget", String(budgetMs), "--out", out, ...args], {
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  });
  await child.exited;
  if (child.exitCode !== 0) {
    log(`${engine} ${sizeLabel(rows)}: the worker failed (exit ${child.exitCode}${child.signalCode ? `, ${child.signalCode}` : ""})`);
    return null;
  }
  return JSON.parse(readFileSync(out, "utf8")) as LatencyReport;
}

/** Latency and build records from a worker report. */
function recordsOf(report: LatencyReport, extra: Partial<BuildRecord>): AnyRecord[] {
  const out: AnyRecord[] = [];
  engineNotes[report.engine] = report.note;
  if (report.skipped) {
    log(`${report.engine} ${sizeLabel(report.rows)}: skipped (${report.skipped})`);
    return out;
  }
  for (const s of report.series) {
    out.push({
      kind: "latency",
      engine: report.engine,
      rows: report.rows,
      query: s.query,
      p50_ms: s.p50_ms ?? null,
      p99_ms: s.p99_ms ?? null,
      mean_ms: s.mean_ms ?? null,
      min_ms: s.min_ms ?? null,
      max_ms: s.max_ms ?? null,
      runs: s.runs ?? 0,
      total_p50: s.total_p50 ?? null,
      check: s.check,
    } satisfies LatencyRecord);
  }
  const open = report.open;
  if (open !== undefined) {
    const ours = report.engine === "ours";
    out.push({
      kind: "build",
      engine: report.engine,
      rows: report.rows,
      build_ms: ours ? null : open.buildMs,
      read_ms: open.readMs,
      load_ms: ours ? open.buildMs : null,
      first_query_ms: report.firstQueryMs ?? null,
      startup_ms: open.readMs + open.buildMs + (report.firstQueryMs ?? 0),
      bytes: open.bytes,
      bytes_note: open.bytesNote,
      rss_bytes: report.rssOpenBytes ?? null,
      note: report.note,
      ...extra,
    } satisfies BuildRecord);
  }
  if (report.checks !== undefined && report.checks.mismatches.length > 0) {
    for (const m of report.checks.mismatches.slice(0, 5)) log(`${report.engine} ${sizeLabel(report.rows)} check: ${m}`);
  }
  return out;
}

const started = performance.now();
log(`sizes ${sizes.map(sizeLabel).join(", ")}; engines ${engines.join(", ")}; budget ${budgetMs} ms per series; HTTP ${http ? `${httpDuration} s per run at ${httpSizes.map(sizeLabel).join(", ")}` : "off"}`);
for (const rows of sizes) {
  const label = sizeLabel(rows);
  const { dataset, stale } = ensureDataset(rows, { rebuild: values.rebuild === true, log });
  if (stale) notes.push(`The ${label} snapshot was built from older store/snapshot/collation sources (kept above ${sizeLabel(AUTO_REBUILD_ROWS)} rows; --rebuild refreshes it).`);
  const build = readBuildReport(dataset);
  const expected = join(cacheDir(key), `expected-${label}.json`);
  rmSync(expected, { force: true });

  // Ours first: its answers are what the peers are checked against.
  const oursReport = await worker("ours", rows, ["--expect", expected, ...(engines.includes("ours") ? [] : ["--series", "none"])]);
  if (oursReport === null) {
    log(`${label}: no reference answers; skipping this size`);
    continue;
  }
  const startups: StartupResult[] = [];
  for (let i = 0; i < 3; i++) {
    try {
      startups.push(await measureStartup(dataset.snapshot));
    } catch (error) {
      log(`${label}: server start-up failed: ${(error as Error).message}`);
      break;
    }
  }
  startups.sort((a, b) => a.firstAnswerMs - b.firstAnswerMs);
  const startup = startups[Math.floor((startups.length - 1) / 2)];
  records.push(
    ...recordsOf(oursReport, {
      build_ms: build.wallMs ?? build.readMs + build.indexMs + build.writeMs,
      server_first_answer_ms: startup?.firstAnswerMs ?? null,
      server_rss_bytes: startup?.rssBytes ?? null,
      note: `${oursReport.note}; \`snapshot build\` of an NDJSON file timed when cached (${build.builtAt}): read ${Math.round(build.readMs)} ms, index ${Math.round(build.indexMs)} ms, write ${Math.round(build.writeMs)} ms`,
    }),
  );
  for (const engine of engines) {
    if (engine === "ours") continue;
    const report = await worker(engine, rows, ["--check", expected]);
    if (report !== null) records.push(...recordsOf(report, {}));
  }
  if (http && httpSizes.includes(rows)) {
    try {
      for (const r of await runHttp(dataset, httpDuration, log)) records.push({ kind: "http", ...r });
      if (httpPeer === "postgres") for (const r of await runHttp(dataset, httpDuration, log, { peer: "postgres" })) records.push({ kind: "http", ...r });
    } catch (error) {
      log(`${label}: HTTP failed: ${(error as Error).message}`);
    }
  }
  await writeResults(results());
  log(`${label} done (${((performance.now() - started) / 1000).toFixed(0)} s so far)`);
}

const final = results();
process.stdout.write(`${renderText(final)}\n`);
for (const path of await writeResults(final)) log(`wrote ${path.slice(ROOT.length + 1)}`);
log(`finished in ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(0);
