/**
 * Question: how do the figures read? Turns the benchmark's records into a terminal table,
 * bench/results/latest.json, bench/results/latest.md and a chart of latency against rows per
 * engine, faceted by query (bench/results/latency.svg, vega-lite rendered headless by vega).
 *
 * Usage: `bun bench/report.ts` re-renders the table, markdown and chart from latest.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vega from "vega";
import * as vl from "vega-lite";
import { ROOT, sizeLabel } from "./datasets.ts";
import type { HttpRecord } from "./http.ts";
import { formatMs } from "./measure.ts";
import { SERIES } from "./queries.ts";

export const RESULTS_DIR = join(ROOT, "bench", "results");

/** One latency series of one engine at one size. */
export interface LatencyRecord {
  kind: "latency";
  engine: string;
  rows: number;
  query: string;
  p50_ms: number | null;
  p99_ms: number | null;
  mean_ms?: number | null;
  min_ms?: number | null;
  max_ms?: number | null;
  runs: number;
  /** Median matching rows over the timed runs. */
  total_p50?: number | null;
  /** "ok" (matches ours), "reference" (ours), "different semantics", "mismatch: …", "error: …". */
  check: string;
}

/** What it costs an engine to build and open a dataset. */
export interface BuildRecord {
  kind: "build";
  engine: string;
  rows: number;
  /** Ours: the snapshot build (timed when the cache was made); peers: inserts + indexes / table creation. */
  build_ms: number | null;
  /** Peers: reading their input columns from the cache. */
  read_ms: number;
  /** Ours: loadSnapshot (mmap + hash verification). */
  load_ms: number | null;
  first_query_ms: number | null;
  /** In-process: read + build (peers) or load (ours) + first query; excludes process start. */
  startup_ms: number | null;
  /** Ours only: spawn of `serve` → first answered GET /api/users, and that server's RSS. */
  server_first_answer_ms?: number | null;
  server_rss_bytes?: number | null;
  bytes: number | null;
  bytes_note: string;
  /** The worker's RSS after opening and the first query (after a full GC). */
  rss_bytes: number | null;
  note: string;
}

export type HttpResultRecord = HttpRecord & { kind: "http" };

export type AnyRecord = LatencyRecord | BuildRecord | HttpResultRecord;

/** Everything one run produced. */
export interface Results {
  meta: {
    date: string;
    bun: string;
    cpus: number;
    memory_gib: number;
    sizes: number[];
    engines: string[];
    budget_ms: number;
    http_duration_s: number | null;
    notes: string[];
    engine_notes: Record<string, string>;
  };
  records: AnyRecord[];
}

/** A fixed-width text table. */
function textTable(header: string[], rows: string[][], alignRight: (column: number) => boolean): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, c) => (alignRight(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** A markdown table. */
function mdTable(header: string[], rows: string[][]): string {
  const esc = (s: string) => s.replaceAll("|", "\\|");
  return [`| ${header.map(esc).join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.map(esc).join(" | ")} |`)].join("\n");
}

/** A latency cell: "p50 / p99", or why there is none. */
function latencyCell(r: LatencyRecord | undefined): string {
  if (r === undefined) return "–";
  if (r.check.startsWith("mismatch")) return "MISMATCH";
  if (r.check.startsWith("error")) return "ERROR";
  if (r.p50_ms === null) return "–";
  const few = r.runs < 20 ? ` (${r.runs})` : "";
  return `${formatMs(r.p50_ms)} / ${formatMs(r.p99_ms ?? Number.NaN)}${few}${r.check === "different semantics" ? "*" : ""}`;
}

/** "123×" from ours' and a peer's p50. */
function ratio(ours: LatencyRecord | undefined, peer: LatencyRecord | undefined): string {
  if (!ours?.p50_ms || !peer?.p50_ms || peer.check !== "ok") return "–";
  const x = peer.p50_ms / ours.p50_ms;
  return x >= 100 ? `${Math.round(x)}×` : `${x.toPrecision(2)}×`;
}

/** MiB with one decimal, or "–". */
function mib(bytes: number | null | undefined): string {
  return bytes === null || bytes === undefined || !Number.isFinite(bytes) ? "–" : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

function ms(value: number | null | undefined): string {
  return value === null || value === undefined ? "–" : formatMs(value);
}

/** Section tables of the results: [title, header, rows][] (shared by terminal and markdown). */
function sections(results: Results): { title: string; header: string[]; rows: string[][]; rightFrom: number }[] {
  const records = results.records;
  const latency = records.filter((r): r is LatencyRecord => r.kind === "latency");
  const builds = records.filter((r): r is BuildRecord => r.kind === "build");
  const http = records.filter((r): r is HttpResultRecord => r.kind === "http");
  const engines = results.meta.engines;
  const out: { title: string; header: string[]; rows: string[][]; rightFrom: number }[] = [];
  for (const rows of results.meta.sizes) {
    const at = latency.filter((r) => r.rows === rows);
    if (at.length === 0) continue;
    const find = (engine: string, query: string) => at.find((r) => r.engine === engine && r.query === query);
    const peersForRatio = engines.filter((e) => e !== "ours" && e !== "orama");
    const header = ["query", "matches", ...engines, ...peersForRatio.map((e) => `${e}/ours`)];
    const table: string[][] = [];
    for (const series of SERIES) {
      const ours = find("ours", series.name);
      const anyTotal = at.find((r) => r.query === series.name && r.total_p50 !== undefined && r.total_p50 !== null);
      table.push([
        series.name,
        anyTotal?.total_p50 === undefined || anyTotal.total_p50 === null ? "–" : String(ours?.total_p50 ?? anyTotal.total_p50),
        ...engines.map((e) => latencyCell(find(e, series.name))),
        ...peersForRatio.map((e) => ratio(ours, find(e, series.name))),
      ]);
    }
    out.push({ title: `Latency at ${sizeLabel(rows)} rows: p50 / p99 per request (in-process, serialization included)`, header, rows: table, rightFrom: 1 });
  }
  if (builds.length > 0) {
    const table = builds.map((b) => [
      b.engine,
      sizeLabel(b.rows),
      ms(b.build_ms),
      b.read_ms > 0 ? ms(b.read_ms) : "–",
      ms(b.load_ms),
      ms(b.first_query_ms),
      ms(b.startup_ms),
      b.server_first_answer_ms === undefined ? "–" : ms(b.server_first_answer_ms),
      b.bytes === null ? "–" : `${mib(b.bytes)} (${b.bytes_note})`,
      mib(b.rss_bytes),
      b.server_rss_bytes === undefined ? "–" : mib(b.server_rss_bytes),
    ]);
    out.push({
      title: "Build and load (ours: snapshot build; peers: inserts + indexes / table creation from columns already read)",
      header: ["engine", "rows", "build", "read input", "load", "first query", "start-up in-process", "server spawn→1st answer", "storage", "RSS", "server RSS"],
      rows: table,
      rightFrom: 2,
    });
  }
  if (http.length > 0) {
    const table = http.map((h) => [
      sizeLabel(h.rows),
      h.scenario,
      String(Math.round(h.rps)),
      ms(h.p50_ms),
      ms(h.p99_ms),
      String(h.connections),
      String(h.errors + h.non2xx),
      `${(h.bytes_per_response / 1024).toFixed(1)} KiB`,
      mib(h.rss_bytes),
    ]);
    out.push({
      title: `HTTP: wrk -t2, ${results.meta.http_duration_s} s per run on 127.0.0.1 — the load generator shares the ${results.meta.cpus} cores with the server`,
      header: ["rows", "scenario", "req/s", "p50", "p99", "conns", "errors", "response", "server RSS"],
      rows: table,
      rightFrom: 2,
    });
  }
  return out;
}

/** Problems worth a line under the tables: mismatches and errors. */
function problems(results: Results): string[] {
  const out: string[] = [];
  for (const r of results.records) {
    if (r.kind === "latency" && (r.check.startsWith("mismatch") || r.check.startsWith("error"))) {
      out.push(`${r.engine} ${sizeLabel(r.rows)} ${r.query}: ${r.check}`);
    }
  }
  return out;
}

/** Under this many times faster than SQLite (p50), a figure of ours is listed as weak. */
export const WEAK_VS_SQLITE = 100;
/** Under this many times faster than any checked peer, a figure of ours is listed as weak. */
export const WEAK_VS_ANY = 10;

/** Figures of ours worth a look: under 100× SQLite, under 10× any peer, far under the HTTP ceiling. */
export function weakSpots(results: Results): string[] {
  const out: string[] = [];
  const latency = results.records.filter((r): r is LatencyRecord => r.kind === "latency");
  for (const ours of latency) {
    if (ours.engine !== "ours" || !ours.p50_ms) continue;
    const peers = latency.filter((r) => r.rows === ours.rows && r.query === ours.query && r.engine !== "ours" && r.check === "ok" && r.p50_ms);
    const reasons: string[] = [];
    for (const peer of peers) {
      const x = (peer.p50_ms as number) / ours.p50_ms;
      if ((peer.engine === "sqlite" && x < WEAK_VS_SQLITE) || x < WEAK_VS_ANY) reasons.push(`${peer.engine} ${formatMs(peer.p50_ms as number)} (${x.toPrecision(2)}×)`);
    }
    if (reasons.length > 0) out.push(`${ours.query} at ${sizeLabel(ours.rows)}: ours p50 ${formatMs(ours.p50_ms)} vs ${reasons.join(", ")}`);
  }
  const http = results.records.filter((r): r is HttpResultRecord => r.kind === "http");
  for (const ceiling of http.filter((h) => h.server === "static")) {
    for (const h of http.filter((r) => r.rows === ceiling.rows && r.server !== "static" && r.connections === ceiling.connections && r.errors + r.non2xx === 0)) {
      const share = (100 * h.rps) / ceiling.rps;
      out.push(`HTTP at ${sizeLabel(h.rows)}, ${h.scenario}: ${Math.round(h.rps)} req/s = ${share.toFixed(share < 10 ? 1 : 0)}% of the raw Bun.serve ceiling`);
    }
  }
  return out;
}

/** The terminal report. */
export function renderText(results: Results): string {
  const parts: string[] = [];
  for (const s of sections(results)) parts.push(`\n${s.title}\n${textTable(s.header, s.rows, (c) => c >= s.rightFrom)}`);
  parts.push("\n* different semantics (not checked); (n) = only n timed runs. Ratios: peer p50 / our p50.");
  for (const p of problems(results)) parts.push(`! ${p}`);
  const weak = weakSpots(results);
  if (weak.length > 0) parts.push(`\nWeak spots (under ${WEAK_VS_SQLITE}× SQLite or ${WEAK_VS_ANY}× any peer at p50; HTTP against the ceiling):`, ...weak.map((w) => `  ${w}`));
  parts.push("");
  for (const note of results.meta.notes) parts.push(`- ${note}`);
  return parts.join("\n");
}

/** The markdown report. */
export function renderMarkdown(results: Results): string {
  const m = results.meta;
  const parts = [
    "# Benchmark results",
    "",
    `${m.date} · Bun ${m.bun} · ${m.cpus} cores · ${m.memory_gib} GiB · sizes ${m.sizes.map(sizeLabel).join(", ")} · budget ${m.budget_ms} ms per series`,
    "",
    "Generated by `npm run bench` (bench/run.ts); the chart is latency.svg beside this file.",
  ];
  for (const s of sections(results)) parts.push("", `## ${s.title}`, "", mdTable(s.header, s.rows));
  parts.push("", "Cells: p50 / p99; `*` different semantics (not checked against ours); `(n)` only n timed runs. Ratios: peer p50 / our p50.");
  const issues = problems(results);
  if (issues.length > 0) parts.push("", "## Mismatches and errors", "", ...issues.map((p) => `- ${p}`));
  const weak = weakSpots(results);
  if (weak.length > 0) parts.push("", `## Weak spots (under ${WEAK_VS_SQLITE}× SQLite or ${WEAK_VS_ANY}× any peer at p50; HTTP against the ceiling)`, "", ...weak.map((w) => `- ${w}`));
  parts.push("", "## Engines", "", ...Object.entries(m.engine_notes).map(([e, n]) => `- **${e}**: ${n}`));
  parts.push("", "## Notes", "", ...m.notes.map((n) => `- ${n}`));
  return `${parts.join("\n")}\n`;
}

/** Chart colours by engine: ours stands out. */
const CHART_ENGINES = ["ours", "sqlite", "duckdb", "arquero", "naive", "orama*", "postgres"];
const CHART_COLORS = ["#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#7f7f7f", "#9467bd", "#8c564b"];

/** The chart: p50 latency against rows, log scales, one line per engine, one facet per query. */
export async function renderChart(results: Results): Promise<string> {
  const values = results.records
    .filter((r): r is LatencyRecord => r.kind === "latency" && r.p50_ms !== null && (r.check === "ok" || r.check === "reference" || r.check === "different semantics"))
    .map((r) => ({ engine: r.check === "different semantics" ? `${r.engine}*` : r.engine, rows: r.rows, query: r.query, p50_ms: r.p50_ms, p99_ms: r.p99_ms }));
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: "p50 latency per request against rows (log–log), in-process", subtitle: "* different semantics; ours includes serialization, as do the peers" },
    data: { values },
    facet: { field: "query", type: "nominal", sort: SERIES.map((s) => s.name), title: null },
    columns: 4,
    resolve: { scale: { y: "shared" } },
    spec: {
      width: 190,
      height: 150,
      mark: { type: "line", point: true, clip: true },
      encoding: {
        x: { field: "rows", type: "quantitative", scale: { type: "log" }, axis: { title: "rows", format: "~s", values: results.meta.sizes } },
        y: { field: "p50_ms", type: "quantitative", scale: { type: "log" }, axis: { title: "p50 ms", format: "~g" } },
        color: {
          field: "engine",
          type: "nominal",
          legend: { title: "engine" },
          // Ours in a strong colour, the peers muted.
          scale: { domain: CHART_ENGINES, range: CHART_COLORS },
        },
        tooltip: [{ field: "engine" }, { field: "rows" }, { field: "p50_ms" }, { field: "p99_ms" }],
      },
    },
  };
  const compiled = vl.compile(spec as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

/** Writes latest.json, latest.md and latency.svg; returns their paths. */
export async function writeResults(results: Results): Promise<string[]> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const json = join(RESULTS_DIR, "latest.json");
  const md = join(RESULTS_DIR, "latest.md");
  const svg = join(RESULTS_DIR, "latency.svg");
  writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(md, renderMarkdown(results));
  writeFileSync(svg, await renderChart(results));
  return [json, md, svg];
}

if (import.meta.main) {
  const results = JSON.parse(readFileSync(join(RESULTS_DIR, "latest.json"), "utf8")) as Results;
  process.stdout.write(`${renderText(results)}\n`);
  for (const path of await writeResults(results)) process.stderr.write(`wrote ${path}\n`);
}
