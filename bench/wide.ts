/**
 * The wide users table (the seed's four + created_at, birthday, role, age, verified, notes,
 * prefs; src/generate/wide.ts) at scale: snapshot build time from NDJSON through the CLI,
 * sorted pages on every sortable column, filters of each added kind with a sort on another
 * column (first AG Grid block on a fresh engine, then the following blocks), the server's RSS,
 * bytes per row per column, and SQLite and DuckDB over the same table, checked against ours
 * before they are timed. PostgreSQL (`--peers sqlite,duckdb,postgres`) gets its own tuned server
 * (bench/engines/postgres.ts), the table COPY-loaded, a B-tree `(column NULLS FIRST, id)` per
 * sort key (which serves both directions with our null order) and a pg_trgm GIN index on the
 * folded notes.
 *
 *   bun bench/wide.ts [--rows 10m] [--peers sqlite,duckdb[,postgres]] [--budget 2000] [--out FILE]
 *
 * Data is cached in bench/.cache/wide-<rows>.ndjson (deterministic: seed 1). Writes
 * bench/results/wide-<rows>.md (or `--out`) and prints the same tables.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import postgres from "postgres";
import { fold } from "../src/collation/collation.ts";
import { createEngine, executeQuery } from "../src/engine/execute.ts";
import { parsePostBody } from "../src/query/post.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { rowsToJson } from "../src/store/rows-json.ts";
import { parseSize, sizeLabel } from "./datasets.ts";
import { copyLine, copyRows, prewarm, startTunedPostgres } from "./engines/postgres.ts";
import { formatMs, summarize } from "./measure.ts";
import { measureStartup } from "./startup.ts";

const ROOT = resolve(import.meta.dir, "..");
const CACHE = join(ROOT, "bench", ".cache");
const DAY = 86_400_000;

const { values } = parseArgs({ options: { rows: { type: "string", default: "10m" }, peers: { type: "string", default: "sqlite,duckdb" }, budget: { type: "string", default: "2000" }, out: { type: "string" } } });
const rows = parseSize(values.rows as string);
const label = sizeLabel(rows);
const peers = (values.peers as string).split(",").filter((p) => p !== "");
const budget = Number(values.budget);
const lines: string[] = [];
const say = (line = "") => {
  console.log(line);
  lines.push(line);
};

type Body = { startRow: number; endRow: number; sortModel: { colId: string; sort: "asc" | "desc" }[]; filterModel: Record<string, unknown> };

/** A filtered, sorted query: AG Grid's body for ours, SQL for the peers (exactly the same rows and order). */
interface WideQuery {
  name: string;
  filterModel: Record<string, unknown>;
  sortModel: Body["sortModel"];
  where: string;
  orderBy: string;
}

const ms2020 = Date.UTC(2020, 0, 1);
const ms2021 = Date.UTC(2021, 0, 1);
const QUERIES: WideQuery[] = [
  {
    name: "created_at in 2020 (date inRange), sort age desc",
    filterModel: { created_at: { filterType: "date", type: "inRange", dateFrom: "2019-12-31 00:00:00", dateTo: "2021-01-01 00:00:00" } },
    sortModel: [{ colId: "age", sort: "desc" }],
    where: `created_ms >= ${ms2020} AND created_ms < ${ms2021}`,
    orderBy: "age DESC NULLS LAST, id DESC",
  },
  {
    name: "age 30–40 exclusive (number inRange), sort created_at desc",
    filterModel: { age: { filterType: "number", type: "inRange", filter: 30, filterTo: 40 } },
    sortModel: [{ colId: "created_at", sort: "desc" }],
    where: "age > 30 AND age < 40",
    orderBy: "created_ms DESC NULLS LAST, id DESC",
  },
  {
    name: "role admin (set), sort birthday asc",
    filterModel: { role: { filterType: "set", values: ["admin"] } },
    sortModel: [{ colId: "birthday", sort: "asc" }],
    where: "role = 'admin'",
    orderBy: "birthday_day ASC NULLS FIRST, id ASC",
  },
  {
    name: "verified true (set), sort created_at asc",
    filterModel: { verified: { filterType: "set", values: [true] } },
    sortModel: [{ colId: "created_at", sort: "asc" }],
    where: "verified = 1",
    orderBy: "created_ms ASC NULLS FIRST, id ASC",
  },
  {
    name: "notes contains 'renewal' (text), sort id desc",
    filterModel: { notes: { filterType: "text", type: "contains", filter: "renewal" } },
    sortModel: [{ colId: "id", sort: "desc" }],
    where: "notes_folded LIKE '%renewal%'",
    orderBy: "id DESC",
  },
];

/** Sorted pages on each added sortable column: the peers' ORDER BY for each. */
const SORT_SQL: Record<string, string> = { created_at: "created_ms", birthday: "birthday_day", role: "role_code", age: "age", verified: "verified" };

// ---------------------------------------------------------------- data

mkdirSync(CACHE, { recursive: true });
const ndjson = join(CACHE, `wide-${label}.ndjson`);
const snapshot = join(CACHE, `wide-${label}.snap`);
if (!existsSync(ndjson)) {
  say(`generating ${ndjson}`);
  const g = Bun.spawnSync([process.execPath, "src/cli.ts", "generate", "--wide", "--count", String(rows), "--format", "ndjson", "--out", ndjson], { cwd: ROOT, stderr: "inherit" });
  if (g.exitCode !== 0) throw new Error("generate failed");
}

say(`# Wide users table, ${label} rows`);
say();
say(`${new Date().toISOString()} · ${navigator.hardwareConcurrency} cores · Bun ${Bun.version} · \`bun bench/wide.ts --rows ${values.rows} --peers ${values.peers}\``);
say();

// ---------------------------------------------------------------- build (the CLI, as a user runs it)

rmSync(snapshot, { force: true });
const t0 = performance.now();
const build = Bun.spawnSync([process.execPath, "src/cli.ts", "snapshot", "build", ndjson, "-o", snapshot], { cwd: ROOT, stderr: "pipe", stdout: "pipe" });
const buildMs = performance.now() - t0;
if (build.exitCode !== 0) throw new Error(`snapshot build failed: ${build.stderr.toString()}`);
const buildLog = `${build.stdout.toString()}${build.stderr.toString()}`.split("\n").filter((l) => l.startsWith("built") || l.startsWith("columns"));
say(`## Build`);
say();
say(`\`snapshot build\` of ${(statSync(ndjson).size / 2 ** 30).toFixed(2)} GiB of NDJSON: **${(buildMs / 1000).toFixed(1)} s** wall (target ≤ 90 s at 10M).`);
for (const l of buildLog) say(`    ${l}`);
say();

// ---------------------------------------------------------------- ours, in process

const loaded = loadSnapshot(snapshot);
const store = loaded.store;
const schema = store.schema;
const run = (engine: ReturnType<typeof createEngine>, body: Body) => {
  const { query } = parsePostBody(body, 1000, schema);
  const page = executeQuery(engine, query);
  rowsToJson(store, page.rows);
  return page;
};
const keys = store.columns.get(store.schema.key)?.distinct as Float64Array;
const idsOf = (page: { rows: Uint32Array }) => Array.from(page.rows, (r) => keys[r]);
const timeRuns = (count: number, f: (i: number) => void): number[] => {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    f(i);
    times.push(performance.now() - t);
  }
  return times;
};

say(`## Sorted pages (in process, 100 rows, offsets 0, N/2, N−100; each ${200} runs)`);
say();
say("| column | kind | asc p50 | asc p99 | desc p50 | desc p99 |");
say("|---|---|---|---|---|---|");
const engine = createEngine(store);
const sortable = schema.columns.filter((c) => c.kind !== "json");
for (const column of sortable) {
  const cells: string[] = [];
  for (const sort of ["asc", "desc"] as const) {
    const offsets = [0, Math.floor(rows / 2), rows - 100];
    for (const startRow of offsets) run(engine, { startRow, endRow: startRow + 100, sortModel: [{ colId: column.id, sort }], filterModel: {} });
    const s = summarize(timeRuns(200, (i) => run(engine, { startRow: offsets[i % 3], endRow: offsets[i % 3] + 100, sortModel: [{ colId: column.id, sort }], filterModel: {} })));
    cells.push(formatMs(s.p50_ms), formatMs(s.p99_ms));
  }
  say(`| ${column.id} | ${column.kind} | ${cells.join(" | ")} |`);
}
say();

/** Ours on one filtered query: the first block on a fresh engine (cold caches), then blocks 1–9 on it. */
function oursFiltered(q: WideQuery): { first: number[]; following: number[]; total: number; pages: number[][] } {
  const first: number[] = [];
  const following: number[] = [];
  let total = 0;
  const pages: number[][] = [];
  for (let session = 0; session < 12; session++) {
    const fresh = createEngine(store);
    for (let block = 0; block < 10; block++) {
      const body = { startRow: block * 100, endRow: block * 100 + 100, sortModel: q.sortModel, filterModel: q.filterModel };
      const t = performance.now();
      const page = run(fresh, body);
      const ms = performance.now() - t;
      if (session > 1) (block === 0 ? first : following).push(ms);
      total = page.total;
      if (session === 0 && (block === 0 || block === 9)) pages.push(idsOf(page));
    }
  }
  return { first, following, total, pages };
}

say(`## Filters with a sort on another column (in process; AG Grid blocks of 100)`);
say();
say("| query | matches | first block p50 | first p99 | blocks 1–9 p50 | blocks 1–9 p99 |");
say("|---|---|---|---|---|---|");
const ours = new Map<string, ReturnType<typeof oursFiltered>>();
for (const q of QUERIES) {
  const r = oursFiltered(q);
  ours.set(q.name, r);
  const f = summarize(r.first);
  const b = summarize(r.following);
  say(`| ${q.name} | ${r.total.toLocaleString("en")} | ${formatMs(f.p50_ms)} | ${formatMs(f.p99_ms)} | ${formatMs(b.p50_ms)} | ${formatMs(b.p99_ms)} |`);
}
say();
say("Targets at 10M: date-range filter + sort by another column, first request p50 ≤ 15 ms, following blocks p50 ≤ 1 ms; sorted pages p99 ≤ 1 ms.");
say();

// ---------------------------------------------------------------- size and RSS

say(`## Size`);
say();
const perColumn = new Map<string, number>();
for (const s of loaded.header.sections) {
  const key = s.name.startsWith("col.") ? s.name.split(".")[1] : s.name.startsWith("records.") || s.name === "recordOffsets" ? "records" : s.name.split(".")[0];
  const bytes = s.length * (s.type === "u8" ? 1 : s.type === "u32" ? 4 : 8);
  perColumn.set(key, (perColumn.get(key) ?? 0) + bytes);
}
say("| part | kind | bytes per row |");
say("|---|---|---|");
for (const [key, bytes] of perColumn) {
  const kind = schema.columns.find((c) => c.id === key)?.kind ?? "";
  say(`| ${key} | ${kind} | ${(bytes / rows).toFixed(1)} |`);
}
say(`| **file** | | **${(loaded.bytes / rows).toFixed(1)}** (${(loaded.bytes / 2 ** 30).toFixed(2)} GiB) |`);
say();
const startup = await measureStartup(snapshot);
say(`Serving it: RSS ${(startup.rssBytes / 2 ** 20).toFixed(0)} MiB after the first answer (listening ${formatMs(startup.listeningMs)}, first answer ${formatMs(startup.firstAnswerMs)}; a private copy of the file is mapped).`);
say();

// ---------------------------------------------------------------- peers

interface Peer {
  name: string;
  loadMs: number;
  query(sql: string): Promise<number[][]>;
  close(): void | Promise<void>;
}

const COLUMNS_SQL = "id DOUBLE, name VARCHAR, email VARCHAR, status VARCHAR, created_ms BIGINT, birthday_day INTEGER, role VARCHAR, role_code INTEGER, age DOUBLE, verified INTEGER, notes_folded VARCHAR";
const roleValues = (schema.columns.find((c) => c.id === "role")?.values ?? []) as string[];

/** The wide table's peer rows, streamed from the NDJSON: epoch ms, day numbers, the role's code in our enum order, folded notes. */
async function* peerRows(): AsyncGenerator<(number | string | null)[]> {
  const file = Bun.file(ndjson);
  let rest = "";
  for await (const chunk of file.stream().pipeThrough(new TextDecoderStream()) as unknown as AsyncIterable<string>) {
    const text = rest + chunk;
    const parts = text.split("\n");
    rest = parts.pop() ?? "";
    for (const line of parts) {
      if (line === "") continue;
      const r = JSON.parse(line);
      yield [
        r.id,
        r.name,
        r.email,
        r.status,
        r.created_at === null ? null : Date.parse(r.created_at),
        r.birthday === null ? null : Math.floor(Date.parse(`${r.birthday}T00:00:00Z`) / DAY),
        r.role,
        r.role === null ? null : roleValues.indexOf(r.role) + 1,
        r.age,
        r.verified === null ? null : r.verified ? 1 : 0,
        r.notes === null ? null : fold(r.notes),
      ];
    }
  }
}

async function openSqlite(): Promise<Peer> {
  const t = performance.now();
  const db = new Database(":memory:");
  db.run(`CREATE TABLE users (${COLUMNS_SQL.replaceAll("DOUBLE", "REAL").replaceAll("VARCHAR", "TEXT").replaceAll("BIGINT", "INTEGER")})`);
  const insert = db.prepare("INSERT INTO users VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  let batch: (number | string | null)[][] = [];
  const flush = db.transaction((rowsToInsert: (number | string | null)[][]) => {
    for (const r of rowsToInsert) insert.run(...r);
  });
  for await (const r of peerRows()) {
    batch.push(r);
    if (batch.length === 50_000) {
      flush(batch);
      batch = [];
    }
  }
  flush(batch);
  for (const c of ["created_ms", "birthday_day", "role", "age", "verified"]) db.run(`CREATE INDEX users_${c} ON users(${c}, id)`);
  return {
    name: "sqlite",
    loadMs: performance.now() - t,
    query: async (sql) => db.prepare(sql).values() as number[][],
    close: () => db.close(),
  };
}

async function openDuckdb(): Promise<Peer> {
  const t = performance.now();
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  const csv = join(CACHE, `wide-${label}.peer.csv`);
  if (!existsSync(csv)) {
    const writer = Bun.file(csv).writer();
    const quote = (v: number | string | null) => (v === null ? "" : typeof v === "number" ? String(v) : `"${v.replaceAll('"', '""')}"`);
    for await (const r of peerRows()) writer.write(`${r.map(quote).join(",")}\n`);
    await writer.end();
  }
  await connection.run(`CREATE TABLE users AS SELECT * FROM read_csv('${csv}', header = false, quote = '"', escape = '"', columns = {${COLUMNS_SQL.split(", ").map((d) => `'${d.split(" ")[0]}': '${d.split(" ")[1]}'`).join(", ")}})`);
  return {
    name: "duckdb",
    loadMs: performance.now() - t,
    query: async (sql) => (await connection.runAndReadAll(sql)).getRows().map((r) => r.map((v) => Number(v))),
    close: () => connection.closeSync(),
  };
}

/** PostgreSQL: a tuned throwaway server, COPY in the creating transaction, a B-tree per sort key, GIN trigrams on notes_folded. */
async function openPostgres(): Promise<Peer> {
  const t = performance.now();
  const server = await startTunedPostgres();
  const sql = postgres(server.url, { max: 1, onnotice: () => {} });
  const columns = COLUMNS_SQL.replaceAll("DOUBLE", "double precision").replaceAll("VARCHAR", "text");
  async function* lines(): AsyncGenerator<string> {
    for await (const r of peerRows()) yield copyLine(r);
  }
  await sql.begin(async (tx) => {
    await tx.unsafe(`CREATE TABLE users (${columns})`);
    await copyRows(tx, "users", lines());
  });
  await sql`ALTER TABLE users ADD PRIMARY KEY (id)`;
  for (const c of ["created_ms", "birthday_day", "role", "age", "verified"]) await sql.unsafe(`CREATE INDEX users_${c} ON users (${c} NULLS FIRST, id)`);
  await sql`CREATE INDEX users_notes_trgm ON users USING gin (notes_folded gin_trgm_ops)`;
  await sql`VACUUM (ANALYZE) users`;
  await prewarm(sql, "users");
  return {
    name: "postgres",
    loadMs: performance.now() - t,
    query: async (text) => (await sql.unsafe(text).values()).map((r) => r.map((v) => Number(v))),
    close: async () => {
      await sql.end({ timeout: 5 });
      await server.stop();
    },
  };
}

if (peers.length > 0) {
  say(`## Peers (same table; each query's total and pages checked against ours before it is timed)`);
  say();
  say("| engine | load | query | first block p50 | blocks 1–9 p50 | ratio to ours (first / following) |");
  say("|---|---|---|---|---|---|");
}
for (const name of peers) {
  const peer = name === "sqlite" ? await openSqlite() : name === "postgres" ? await openPostgres() : await openDuckdb();
  for (const q of QUERIES) {
    const mine = ours.get(q.name) as ReturnType<typeof oursFiltered>;
    const count = (await peer.query(`SELECT COUNT(*) FROM users WHERE ${q.where}`))[0][0];
    const page = async (block: number) => (await peer.query(`SELECT id FROM users WHERE ${q.where} ORDER BY ${q.orderBy} LIMIT 100 OFFSET ${block * 100}`)).map((r) => r[0]);
    const checks = [count === mine.total, JSON.stringify(await page(0)) === JSON.stringify(mine.pages[0]), JSON.stringify(await page(9)) === JSON.stringify(mine.pages[1])];
    if (checks.includes(false)) {
      say(`| ${peer.name} | ${formatMs(peer.loadMs)} | ${q.name} | not timed: answers differ from ours (${checks}) | | |`);
      continue;
    }
    const first: number[] = [];
    const following: number[] = [];
    const deadline = performance.now() + budget * 2;
    for (let i = 0; i < 20 && (i < 3 || performance.now() < deadline); i++) {
      let t = performance.now();
      await peer.query(`SELECT COUNT(*) FROM users WHERE ${q.where}`);
      await page(0);
      first.push(performance.now() - t);
      t = performance.now();
      await page(1 + (i % 9));
      following.push(performance.now() - t);
    }
    const f = summarize(first).p50_ms;
    const b = summarize(following).p50_ms;
    say(`| ${peer.name} | ${formatMs(peer.loadMs)} | ${q.name} | ${formatMs(f)} | ${formatMs(b)} | ${(f / summarize(mine.first).p50_ms).toFixed(0)}× / ${(b / summarize(mine.following).p50_ms).toFixed(0)}× |`);
  }
  await peer.close();
}

const out = values.out ?? join(ROOT, "bench", "results", `wide-${label}.md`);
writeFileSync(out, `${lines.join("\n")}\n`);
console.log(`[wide] wrote ${out}`);
