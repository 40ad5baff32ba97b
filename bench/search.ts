/**
 * Global search, facets and export on the wide users table (src/generate/wide.ts) at scale
 * (docs/api.md "Global search", "Facets", "Export"):
 * - 2-term searches (a piece of a name and a piece of an email, 3–5 characters each): the first
 *   AG Grid block on a fresh engine, then the following blocks (rows 100–1000), in id order and
 *   sorted by name;
 * - one- and two-character terms against 3-character terms with a similar match count;
 * - facets on `status` + `role`: unfiltered, and under a name substring filter (first request);
 * - export of every row as CSV and NDJSON over HTTP from a `serve` process: rows/s and the
 *   server's RSS growth while it streams;
 * - peers on the same searches: SQLite FTS5 with the trigram tokenizer over one document per
 *   row (the searchable columns, folded, one per line), and DuckDB scanning them with
 *   `contains`; each search's count and first block checked equal to ours before it is timed.
 *
 * - a role's search through the columns it sees (every one but `email` and `notes`): terms found
 *   only in those two columns against terms found in no column (1–5 characters), each on a fresh
 *   engine; their p50 ratio is what the role can learn of the hidden values by timing
 *   (docs/api.md "Access control": cost isolation);
 *
 *   bun bench/search.ts [--rows 10m] [--peers sqlite,duckdb] [--searches 30] [--no-export] [--only hidden|searches]
 *
 * Uses bench/.cache/wide-<rows>.ndjson (bench/wide.ts makes it) and builds
 * bench/.cache/wide-<rows>.snap from it when missing or unreadable. Writes
 * bench/results/search-<rows>.md and prints the same tables.
 */
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import { fold } from "../src/collation/collation.ts";
import { createEngine, executeQuery } from "../src/engine/execute.ts";
import { computeFacets } from "../src/engine/facets.ts";
import { parseFacetsPost } from "../src/query/facets.ts";
import { parsePostBody } from "../src/query/post.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { recordAt } from "../src/store/rows-json.ts";
import { parseSize, prng, sizeLabel } from "./datasets.ts";
import { formatMs, summarize } from "./measure.ts";
import { spawnServer } from "./server.ts";

const ROOT = resolve(import.meta.dir, "..");
const CACHE = join(ROOT, "bench", ".cache");

const { values } = parseArgs({
  options: { rows: { type: "string", default: "10m" }, peers: { type: "string", default: "sqlite,duckdb" }, searches: { type: "string", default: "30" }, "no-export": { type: "boolean", default: false }, only: { type: "string" } },
});
const rows = parseSize(values.rows as string);
const label = sizeLabel(rows);
const peers = (values.peers as string).split(",").filter((p) => p !== "");
const searchCount = Number(values.searches);
const lines: string[] = [];
const say = (line = "") => {
  console.log(line);
  lines.push(line);
};

const ndjson = join(CACHE, `wide-${label}.ndjson`);
const snapshot = join(CACHE, `wide-${label}.snap`);
if (!existsSync(ndjson)) throw new Error(`${ndjson} is missing: run \`bun bench/wide.ts --rows ${label}\` first`);
let loaded: ReturnType<typeof loadSnapshot>;
try {
  loaded = loadSnapshot(snapshot);
} catch {
  console.error(`building ${snapshot}`);
  const build = Bun.spawnSync([process.execPath, "src/cli.ts", "snapshot", "build", ndjson, "-o", snapshot], { cwd: ROOT, stderr: "inherit", stdout: "ignore" });
  if (build.exitCode !== 0) throw new Error("snapshot build failed");
  loaded = loadSnapshot(snapshot);
}
const store = loaded.store;
const n = store.rowCount;
say(`# Search, facets and export, wide table, ${label} rows`);
say();
say(`Machine: ${navigator.hardwareConcurrency} cores; Bun ${Bun.version}. Command: \`bun bench/search.ts --rows ${label}${values.only === undefined ? "" : ` --only ${values.only}`}\`.`);
say();

// ---------------------------------------------------------------- hidden columns

if (values.only !== "searches") {
  // a role that sees every column but `email` and `notes` (its search looks into the others)
  const HIDDEN = ["email", "notes"];
  const seen = store.searchable.map((c) => c.spec.id).filter((id) => !HIDDEN.includes(id));
  type Run = { total: number; p50: number };
  /** Count and fresh-engine p50 (5 runs) of a one-term search's first block through `columns` (every one when undefined). */
  const measure = (term: string, columns: string[] | undefined): Run => {
    const runs: number[] = [];
    let total = 0;
    const query = parsePostBody({ startRow: 0, endRow: 100, sortModel: [], filterModel: {}, quickFilter: term }, 1000, store.schema).query;
    const restricted = { ...query, filter: { kind: "search" as const, terms: [term], columns } };
    for (let i = 0; i < 5; i++) {
      const engine = createEngine(store);
      runs.push(time(() => (total = executeQuery(engine, restricted).total)));
    }
    return { total, p50: summarize(runs).p50_ms };
  };
  const pick = prng(0x41dd);
  const hidden: { term: string; everywhere: number; run: Run }[] = [];
  const candidates = new Set<string>(["@", ".", "@e", "e.", "com", "xam", "mple", "ex"]);
  for (let tries = 0; candidates.size < 60 && tries < 5000; tries++) {
    const r = recordAt(store, pick() % n);
    const text = fold(`${(r.email as string) ?? ""} ${(r.notes as string) ?? ""}`);
    const length = 1 + (pick() % 5);
    const start = pick() % Math.max(1, text.length - length);
    const term = text.slice(start, start + length).trim();
    if (term.length > 0 && !/\s/.test(term)) candidates.add(term);
  }
  for (const term of candidates) {
    if (hidden.length >= 20) break;
    const everywhere = measure(term, undefined).total;
    const run = measure(term, seen);
    if (everywhere > 0 && run.total === 0) hidden.push({ term, everywhere, run });
  }
  const absent: { term: string; run: Run }[] = [];
  // letters no generated value holds, 1–5 of them
  const letters = "ŋʒƣǂɮ";
  for (let i = 0; absent.length < hidden.length && i < 500; i++) {
    let term = "";
    const length = 1 + (i % 5);
    for (let c = 0; c < length; c++) term += letters[pick() % letters.length];
    const everywhere = measure(term, undefined).total;
    if (everywhere === 0) absent.push({ term, run: measure(term, seen) });
  }
  // measured again, interleaved, now that every path has run (the first measures warmed the JIT)
  for (let i = 0; i < hidden.length; i++) {
    hidden[i].run = measure(hidden[i].term, seen);
    if (i < absent.length) absent[i].run = measure(absent[i].term, seen);
  }
  const h = summarize(hidden.map((x) => x.run.p50));
  const a = summarize(absent.map((x) => x.run.p50));
  say("## A role's search: terms only in columns it cannot see, against terms in no column");
  say();
  say(`A role seeing every column but ${HIDDEN.map((c) => `\`${c}\``).join(" and ")} searches ${seen.map((c) => `\`${c}\``).join(", ")}; each term's first block and count on a fresh engine, 5 runs, p50.`);
  say();
  say("| terms | count | rows in hidden columns p50 | p50 of the terms' p50 | p99 |");
  say("|---|---|---|---|---|");
  say(`| only in hidden columns (e.g. ${hidden.slice(0, 4).map((x) => `\`${x.term}\``).join(", ")}) | ${hidden.length} | ${summarize(hidden.map((x) => x.everywhere)).p50_ms.toFixed(0)} | ${formatMs(h.p50_ms)} | ${formatMs(h.p99_ms)} |`);
  say(`| in no column (e.g. ${absent.slice(0, 4).map((x) => `\`${x.term}\``).join(", ")}) | ${absent.length} | 0 | ${formatMs(a.p50_ms)} | ${formatMs(a.p99_ms)} |`);
  say();
  say(`Hidden / absent: p50 ${(h.p50_ms / a.p50_ms).toFixed(2)}×, p99 ${(h.p99_ms / a.p99_ms).toFixed(2)}× (target: within 1.2×).`);
  const slowest = [...hidden].sort((x, y) => y.run.p50 - x.run.p50).slice(0, 3);
  say(`Slowest terms only in hidden columns: ${slowest.map((x) => `\`${x.term}\` ${formatMs(x.run.p50)} (${x.everywhere} rows in hidden columns)`).join(", ")}.`);
  say();
  if (values.only === "hidden") {
    writeFileSync(join(ROOT, "bench", "results", `search-hidden-${label}.md`), `${lines.join("\n")}\n`);
    process.exit(0);
  }
}

// ---------------------------------------------------------------- the searches

/** A piece of 3–5 characters of `text`, folded, letters and digits only; null when none. */
function piece(text: string, next: () => number): string | null {
  const words = fold(text).split(/[^a-z0-9]+/).filter((w) => w.length >= 3);
  if (words.length === 0) return null;
  const word = words[next() % words.length];
  const length = Math.min(word.length, 3 + (next() % 3));
  const start = next() % (word.length - length + 1);
  return word.slice(start, start + length);
}

const next = prng(0x5ea2c4);
const searches: string[] = [];
while (searches.length < searchCount) {
  const r = recordAt(store, next() % n);
  const a = piece(r.name as string, next);
  const b = piece((r.email as string).split("@")[0], next);
  if (a !== null && b !== null && a !== b) searches.push(`${a} ${b}`);
}

type Body = { startRow: number; endRow: number; sortModel: { colId: string; sort: "asc" | "desc" }[]; filterModel: Record<string, unknown>; quickFilter?: string };

/** Milliseconds of `fn`. */
function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

const SCHEMA = store.schema;
/**
 * Each row's id from the number key's values (row r holds the (r+1)-th key), as SQLite reads
 * its integer id column: decoding 100 wide JSON records for their ids took 0.3–0.5 ms, several
 * times a following block's own time.
 */
const KEYS = store.columns.get(SCHEMA.key)?.distinct ?? null;
/** Our answer to a body: total and the ids of its window. */
function ours(engine: ReturnType<typeof createEngine>, body: Body): { total: number; ids: number[] } {
  const page = executeQuery(engine, parsePostBody(body, 1000, SCHEMA).query);
  return { total: page.total, ids: Array.from(page.rows, (row) => (KEYS !== null ? KEYS[row] : (recordAt(store, row).id as number))) };
}

say("## 2-term search (AG Grid blocks of 100 rows)");
say();
say(`${searches.length} searches, e.g. ${searches.slice(0, 4).map((s) => `\`${s}\``).join(", ")}; a fresh engine (empty caches) for each first block.`);
say();
say("| sort | matches p50 | first block p50 | first block p99 | following blocks p50 | following p99 |");
say("|---|---|---|---|---|---|");
const totals = new Map<string, number>();
for (const sortModel of [[], [{ colId: "name", sort: "asc" as const }]]) {
  const first: number[] = [];
  const following: number[] = [];
  const matches: number[] = [];
  for (const q of searches) {
    const engine = createEngine(store);
    let answer = { total: 0, ids: [] as number[] };
    first.push(time(() => (answer = ours(engine, { startRow: 0, endRow: 100, sortModel, filterModel: {}, quickFilter: q }))));
    matches.push(answer.total);
    totals.set(q, answer.total);
    for (let block = 1; block < 10 && block * 100 < answer.total; block++) following.push(time(() => ours(engine, { startRow: block * 100, endRow: block * 100 + 100, sortModel, filterModel: {}, quickFilter: q })));
  }
  const f = summarize(first);
  const g = summarize(following);
  say(`| ${sortModel.length === 0 ? "id (none)" : "name asc"} | ${summarize(matches).p50_ms.toFixed(0)} | ${formatMs(f.p50_ms)} | ${formatMs(f.p99_ms)} | ${formatMs(g.p50_ms)} | ${formatMs(g.p99_ms)} |`);
}
say();

if (values.only === "searches") {
  writeFileSync(join(ROOT, "bench", "results", `search-searches-${label}.md`), `${lines.join("\n")}\n`);
  process.exit(0);
}

// ---------------------------------------------------------------- short terms

// One- and two-character terms answered from the search index against 3-character terms with a
// similar match count: each short term paired with the 3-character term whose count is nearest.
say("## Short terms against 3-character terms of a similar match count (id order, first block of 100 + count)");
say();
say("Each term on a fresh engine (empty caches), 5 runs, p50; the 3-character term is the candidate whose count is nearest the short term's.");
say();
say("| term | matches | first block p50 | 3-char term | matches | first block p50 | short / 3-char |");
say("|---|---|---|---|---|---|---|");
{
  /** Count and fresh-engine p50 of a one-term search's first block. */
  const measure = (term: string, times = 5): { total: number; p50: number } => {
    const runs: number[] = [];
    let total = 0;
    for (let i = 0; i < times; i++) {
      const engine = createEngine(store);
      runs.push(time(() => (total = ours(engine, { startRow: 0, endRow: 100, sortModel: [], filterModel: {}, quickFilter: term }).total)));
    }
    return { total, p50: summarize(runs).p50_ms };
  };
  const pick = prng(0x5407);
  const pieces = (length: number, count: number): string[] => {
    const out = new Set<string>();
    for (let tries = 0; out.size < count && tries < count * 50; tries++) {
      const r = recordAt(store, pick() % n);
      const words = fold(`${r.name} ${(r.email as string).split("@")[0]}`).split(/[^a-z0-9]+/).filter((w) => w.length >= length);
      if (words.length === 0) continue;
      const word = words[pick() % words.length];
      const start = pick() % (word.length - length + 1);
      out.add(word.slice(start, start + length));
    }
    return [...out];
  };
  const threes = pieces(3, 300).map((term) => ({ term, total: measure(term, 1).total }));
  const shorts = [...["q", "x", "z", "j", "7", "a"], ...pieces(2, 8)];
  const ratios: { length: number; ratio: number }[] = [];
  for (const term of shorts) {
    const short = measure(term);
    let best = threes[0];
    for (const t of threes) if (Math.abs(Math.log((t.total + 1) / (short.total + 1))) < Math.abs(Math.log((best.total + 1) / (short.total + 1)))) best = t;
    const three = measure(best.term);
    const ratio = short.p50 / three.p50;
    ratios.push({ length: term.length, ratio });
    say(`| \`${term}\` | ${short.total.toLocaleString("en")} | ${formatMs(short.p50)} | \`${best.term}\` | ${three.total.toLocaleString("en")} | ${formatMs(three.p50)} | ${ratio.toFixed(2)}× |`);
  }
  say();
  for (const length of [1, 2]) {
    const rs = ratios.filter((r) => r.length === length).map((r) => r.ratio).sort((a, b) => a - b);
    say(`${length}-character terms: short / 3-char p50 ratio median ${rs[Math.floor(rs.length / 2)].toFixed(2)}×, worst ${rs[rs.length - 1].toFixed(2)}× (${rs.length} terms).`);
  }
}
say();

// ---------------------------------------------------------------- facets

say("## Facets: `status` + `role`");
say();
say("| request | p50 | p99 | runs |");
say("|---|---|---|---|");
{
  const engine = createEngine(store);
  const unfiltered: number[] = [];
  for (let i = 0; i < 200; i++) unfiltered.push(time(() => computeFacets(engine, parseFacetsPost({ columns: ["status", "role"] }, 1000, SCHEMA))));
  const u = summarize(unfiltered.slice(20));
  say(`| unfiltered | ${formatMs(u.p50_ms)} | ${formatMs(u.p99_ms)} | ${u.runs} |`);
  const filtered: number[] = [];
  const needles = searches.map((s) => s.split(" ")[0]);
  for (const needle of needles) {
    const fresh = createEngine(store);
    filtered.push(time(() => computeFacets(fresh, parseFacetsPost({ columns: ["status", "role"], filterModel: { name: { filterType: "text", type: "contains", filter: needle } } }, 1000, SCHEMA))));
  }
  const f = summarize(filtered);
  say(`| name contains a 3–5 letter piece (first request, fresh engine) | ${formatMs(f.p50_ms)} | ${formatMs(f.p99_ms)} | ${f.runs} |`);
  const withSearch: number[] = [];
  for (const q of searches) {
    const fresh = createEngine(store);
    withSearch.push(time(() => computeFacets(fresh, parseFacetsPost({ columns: ["status", "role"], quickFilter: q, filterModel: { status: { filterType: "set", values: ["active"] } } }, 1000, SCHEMA))));
  }
  const w = summarize(withSearch);
  say(`| 2-term search + status filter (first request, fresh engine) | ${formatMs(w.p50_ms)} | ${formatMs(w.p99_ms)} | ${w.runs} |`);
}
say();

// ---------------------------------------------------------------- export over HTTP

if (!values["no-export"]) {
  say("## Export of every row over HTTP (`serve` process; curl reading to /dev/null)");
  say();
  say("Memory of the server while it streams: anonymous (heap, buffers: what the export holds) and file-backed (pages of the mapped snapshot, the OS's reclaimable page cache) resident sets, from /proc/<pid>/status.");
  say();
  say("| format | rows | bytes | time | rows/s | anon RSS before | anon peak growth | file RSS growth |");
  say("|---|---|---|---|---|---|---|---|");
  const server = await spawnServer(snapshot);
  /** RssAnon and RssFile of a process, in bytes. */
  const rssParts = (pid: number) => {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) * 1024;
    return { anon: kb("RssAnon"), file: kb("RssFile") };
  };
  try {
    for (const format of ["csv", "ndjson"]) {
      await Bun.sleep(500);
      const before = rssParts(server.pid);
      let peak = before;
      const sampler = setInterval(() => {
        const now = rssParts(server.pid);
        peak = { anon: Math.max(peak.anon, now.anon), file: Math.max(peak.file, now.file) };
      }, 50);
      const curl = Bun.spawn(["curl", "-s", "-o", "/dev/null", "-w", "%{size_download} %{time_total} %{http_code}", `${server.url}/api/users/export?format=${format}`], { stdout: "pipe" });
      const [bytesText, secondsText, status] = (await new Response(curl.stdout).text()).trim().split(" ");
      clearInterval(sampler);
      if (status !== "200") throw new Error(`export of ${format}: HTTP ${status}`);
      const bytes = Number(bytesText);
      const seconds = Number(secondsText);
      say(`| ${format} | ${n.toLocaleString("en")} | ${(bytes / 2 ** 30).toFixed(2)} GiB | ${seconds.toFixed(1)} s | ${(n / seconds / 1e6).toFixed(2)} M | ${(before.anon / 2 ** 20).toFixed(0)} MiB | ${((peak.anon - before.anon) / 2 ** 20).toFixed(0)} MiB | ${((peak.file - before.file) / 2 ** 20).toFixed(0)} MiB |`);
    }
    // the row count, once, outside the timing: line feeds outside quoted fields
    const response = await fetch(`${server.url}/api/users/export?format=csv`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let lines = 0;
    let quoted = false;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let i = 0;
      for (;;) {
        const lf = value.indexOf(10, i);
        const quote = value.indexOf(34, i);
        if (quote >= 0 && (lf < 0 || quote < lf)) {
          quoted = !quoted;
          i = quote + 1;
        } else if (lf >= 0) {
          if (!quoted) lines++;
          i = lf + 1;
        } else break;
      }
    }
    if (lines - 1 !== n) throw new Error(`the CSV export holds ${lines - 1} rows, expected ${n}`);
  } finally {
    await server.stop();
  }
  say();
}

// ---------------------------------------------------------------- peers

/** The searchable columns of a record, folded, one per line: what a peer's search reads. */
function documentOf(r: Record<string, unknown>): string {
  return [String(r.id), r.name, r.email, r.status, r.role ?? "", r.notes ?? ""].map((v) => fold(String(v))).join("\n");
}

/** Every record of the NDJSON (id, document), streamed. */
async function* documents(): AsyncGenerator<[number, string]> {
  let rest = "";
  for await (const chunk of Bun.file(ndjson).stream().pipeThrough(new TextDecoderStream()) as unknown as AsyncIterable<string>) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop() ?? "";
    for (const line of parts) {
      if (line === "") continue;
      const r = JSON.parse(line) as Record<string, unknown>;
      yield [r.id as number, documentOf(r)];
    }
  }
}

interface Peer {
  name: string;
  loadMs: number;
  /** The search's count and the first 100 ids in id order. */
  search(terms: string[], offset: number): Promise<{ total: number | null; ids: number[] }>;
  close(): void;
}

async function openSqlite(): Promise<Peer> {
  const t = performance.now();
  const db = new Database(":memory:");
  db.run("CREATE VIRTUAL TABLE docs USING fts5(doc, tokenize = 'trigram case_sensitive 1')");
  const insert = db.prepare("INSERT INTO docs(rowid, doc) VALUES (?, ?)");
  let batch: [number, string][] = [];
  const flush = db.transaction((items: [number, string][]) => {
    for (const [id, doc] of items) insert.run(id, doc);
  });
  for await (const d of documents()) {
    batch.push(d);
    if (batch.length === 50_000) {
      flush(batch);
      batch = [];
    }
  }
  flush(batch);
  const match = (terms: string[]) => terms.map((term) => `"${term}"`).join(" AND ");
  return {
    name: "SQLite FTS5 trigram",
    loadMs: performance.now() - t,
    search: async (terms, offset) => {
      const ids = (db.prepare("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rowid LIMIT 100 OFFSET ?").values(match(terms), offset) as number[][]).map((r) => r[0]);
      const total = offset === 0 ? ((db.prepare("SELECT count(*) FROM docs WHERE docs MATCH ?").values(match(terms)) as number[][])[0][0] as number) : null;
      return { total, ids };
    },
    close: () => db.close(),
  };
}

async function openDuckdb(): Promise<Peer> {
  const t = performance.now();
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  const csv = join(CACHE, `search-${label}.peer.csv`);
  if (!existsSync(csv)) {
    const writer = Bun.file(csv).writer();
    for await (const [id, doc] of documents()) writer.write(`${id},"${doc.replaceAll('"', '""')}"\n`);
    await writer.end();
  }
  await connection.run(`CREATE TABLE docs AS SELECT * FROM read_csv('${csv}', header = false, quote = '"', escape = '"', columns = {'id': 'BIGINT', 'doc': 'VARCHAR'})`);
  const where = (terms: string[]) => terms.map((term) => `contains(doc, '${term.replaceAll("'", "''")}')`).join(" AND ");
  return {
    name: "DuckDB (contains)",
    loadMs: performance.now() - t,
    search: async (terms, offset) => {
      const ids = (await connection.runAndReadAll(`SELECT id FROM docs WHERE ${where(terms)} ORDER BY id LIMIT 100 OFFSET ${offset}`)).getRows().map((r) => Number(r[0]));
      const total = offset === 0 ? Number((await connection.runAndReadAll(`SELECT count(*) FROM docs WHERE ${where(terms)}`)).getRows()[0][0]) : null;
      return { total, ids };
    },
    close: () => connection.closeSync(),
  };
}

if (peers.length > 0) {
  say("## Peers on the same searches (id order; count and first block checked equal to ours first)");
  say();
  say("| engine | load | searches equal | first block + count p50 | following blocks p50 | ours: first / following p50 |");
  say("|---|---|---|---|---|---|");
}
for (const name of peers) {
  const peer = name === "sqlite" ? await openSqlite() : await openDuckdb();
  const first: number[] = [];
  const following: number[] = [];
  const oursFirst: number[] = [];
  const oursFollowing: number[] = [];
  let equal = 0;
  for (const q of searches) {
    const terms = q.split(" ");
    const engine = createEngine(store);
    let mine = { total: 0, ids: [] as number[] };
    const t0 = time(() => (mine = ours(engine, { startRow: 0, endRow: 100, sortModel: [], filterModel: {}, quickFilter: q })));
    const t = performance.now();
    const theirs = await peer.search(terms, 0);
    const peerMs = performance.now() - t;
    if (theirs.total !== mine.total || JSON.stringify(theirs.ids) !== JSON.stringify(mine.ids)) {
      console.error(`${peer.name}: "${q}" differs (${theirs.total} vs ${mine.total}); not timed`);
      continue;
    }
    equal++;
    first.push(peerMs);
    oursFirst.push(t0);
    if (mine.total > 200) {
      oursFollowing.push(time(() => ours(engine, { startRow: 100, endRow: 200, sortModel: [], filterModel: {}, quickFilter: q })));
      const t2 = performance.now();
      await peer.search(terms, 100);
      following.push(performance.now() - t2);
    }
  }
  const f = summarize(first);
  const g = summarize(following);
  say(
    `| ${peer.name} | ${(peer.loadMs / 1000).toFixed(1)} s | ${equal} of ${searches.length} | ${formatMs(f.p50_ms)} | ${formatMs(g.p50_ms)} | ${formatMs(summarize(oursFirst).p50_ms)} / ${formatMs(summarize(oursFollowing).p50_ms)} |`,
  );
  peer.close();
}
say();
writeFileSync(join(ROOT, "bench", "results", `search-${label}.md`), `${lines.join("\n")}\n`);
