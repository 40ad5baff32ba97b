/**
 * PostgreSQL 15 — the peer most users would pick instead — in a throwaway server of its own
 * (test/support/postgres.ts `startPostgres()`: initdb in a temporary directory under /tmp, a free
 * loopback port, fsync off), restarted once with the benchmark settings of {@link PG_SETTINGS},
 * queried through the `postgres` driver (postgres.js, prepared statements, one connection).
 *
 * What it is given, as a user would set it up:
 * - a database with a UTF-8 character classification (LC_CTYPE C.UTF-8; LC_COLLATE C), so that
 *   pg_trgm extracts trigrams from letters of every script;
 * - the table `users(id integer, name text, email text, status text, name_folded text,
 *   email_folded text)`, loaded with `COPY … FROM STDIN` in the transaction that creates it (no
 *   WAL at wal_level=minimal); `name_folded`/`email_folded` are the precomputed folded forms
 *   the other peers get too (in its favour: no `unaccent(lower(…))` at query time);
 * - `CREATE EXTENSION pg_trgm` and a GIN index (`gin_trgm_ops`) on each folded column, which
 *   serves the contains filters, written `name_folded LIKE '%needle%'` (LIKE wildcards escaped);
 * - the ICU collation {@link COLLATION_SQL} — `en-u-ks-level1-kn-true`, nondeterministic: primary
 *   strength (case and accents ignored) and numeric ordering, as our
 *   `Intl.Collator("en", {sensitivity: "base", numeric: true})` — on the real strings: string
 *   sort keys are ordered `name COLLATE ours, id` (NOT our precomputed rank columns, which SQLite
 *   and DuckDB get);
 * - one B-tree index per sort key, ending with the id tie-break: the primary key `(id)`,
 *   `(name COLLATE ours, id)`, `(email COLLATE ours, id)`, `(status, id)`, and the composite
 *   `(status, name COLLATE ours DESC, id DESC)` a DBA would add for a grid ordered by status then
 *   name (Q8's order: without it Q8 sorts every row); then VACUUM ANALYZE.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Writable } from "node:stream";
import postgres from "postgres";
import type { BenchQueryShape as Query } from "../query-model.ts";
import { STATUS_VALUES } from "../../src/generate/record.ts";
import { type TestPostgres, startPostgres } from "../../test/support/postgres.ts";
import { type Dataset, readPeerColumns } from "../datasets.ts";
import { type Answer, type BenchEngine, type OpenReport, type PeerSortColumn, peerPlan } from "./engine.ts";
import { type SqlDialect, toSql } from "./sql.ts";

/**
 * Server settings for the benchmark (written with ALTER SYSTEM, then a restart), on a 2-core,
 * 23 GiB machine shared with other work:
 * - `shared_buffers` 4GB: the whole table and its indexes stay in PostgreSQL's own cache (1M rows
 *   take about 0.4 GB, 10M about 4 GB); `effective_cache_size` 8GB says the OS caches the rest;
 * - `work_mem` 256MB: the sorts that no index serves (Q8's two-key order over every row) stay in
 *   memory; `maintenance_work_mem` 2GB for the index builds;
 * - `max_parallel_workers_per_gather` 1: one worker plus the leader is the 2 cores; more would
 *   only oversubscribe them;
 * - `random_page_cost` 1.1: everything is in memory; `jit` off: compiling a 1M-row count costs
 *   more than it saves, and a first query would pay it;
 * - `wal_level` minimal, `max_wal_senders` 0, `max_wal_size` 16GB: the load writes no WAL and
 *   triggers no checkpoint; `synchronous_commit` off (fsync is already off in the test helper).
 */
export const PG_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: "4GB",
  effective_cache_size: "8GB",
  work_mem: "256MB",
  maintenance_work_mem: "2GB",
  max_parallel_workers_per_gather: "1",
  max_parallel_maintenance_workers: "1",
  random_page_cost: "1.1",
  jit: "off",
  wal_level: "minimal",
  max_wal_senders: "0",
  max_wal_size: "16GB",
  synchronous_commit: "off",
};

/** The ICU collation that orders as ours (docs/api.md "Ordering"), named `ours`. */
export const COLLATION_SQL = "CREATE COLLATION ours (provider = icu, locale = 'en-u-ks-level1-kn-true', deterministic = false)";

/** A LIKE pattern matching `needle` anywhere: `%needle%`, with `\`, `%` and `_` escaped (LIKE's default escape is `\`). */
export function likeContains(needle: string): string {
  return `%${needle.replace(/[\\%_]/g, "\\$&")}%`;
}

/** The ORDER BY expression of a peer sort column: the real strings under the ICU collation, not the rank columns. */
function orderExpression(column: PeerSortColumn): string {
  if (column === "name_rank") return "name COLLATE ours";
  if (column === "email_rank") return "email COLLATE ours";
  return column;
}

/** PostgreSQL's dialect for bench/engines/sql.ts `toSql`: `$n` placeholders, LIKE patterns, collated string order. */
export const POSTGRES_DIALECT: SqlDialect = { placeholder: (i) => `$${i}`, containsParam: likeContains, orderExpression };

/** PostgreSQL's substring test on a folded column (served by its pg_trgm GIN index). */
export function postgresContains(column: string, placeholder: string): string {
  return `${column} LIKE ${placeholder}`;
}

/** The directory of pg_ctl: Debian's newest /usr/lib/postgresql/<v>/bin, else the PATH's (as test/support/postgres.ts finds it). */
function binDir(): string {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(root, versions[0], "bin");
  }
  const found = Bun.which("pg_ctl");
  if (found === null) throw new Error("PostgreSQL is not installed: run `sh scripts/install-postgres.sh` (as root)");
  return join(found, "..");
}

/** Restarts the server of `dataDir` with its original options (postmaster.opts), as `postgres` when root. @throws when pg_ctl fails */
function restart(dataDir: string): void {
  const args = [join(binDir(), "pg_ctl"), "-D", dataDir, "-m", "fast", "-w", "-l", join(dataDir, "..", "log"), "restart"];
  const command = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...args] : args;
  const result = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`pg_ctl restart failed (${result.exitCode}): ${result.stderr.toString()}${result.stdout.toString()}`);
}

/** A text field of COPY's text format: backslash, tab, newline and CR escaped. */
function copyField(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r")) : value;
}

/** One row of COPY's text format: fields tab-separated, `null` as `\N`, numbers in JS's decimal form, ending with a newline. */
export function copyLine(fields: readonly (string | number | null)[]): string {
  return `${fields.map((f) => (f === null ? "\\N" : typeof f === "number" ? String(f) : copyField(f))).join("\t")}\n`;
}

/**
 * Streams rows into `COPY <target> FROM STDIN` (text format) on `sql` (a transaction, so that a
 * table created in it is loaded without WAL), about 1 MB per write. Resolves when the server
 * has taken every row. @throws what the server or `rows` throws
 */
export async function copyRows(sql: postgres.Sql | postgres.TransactionSql, target: string, rows: Iterable<string> | AsyncIterable<string>): Promise<void> {
  const stream = await sql.unsafe(`COPY ${target} FROM STDIN`).writable();
  const done = new Promise<void>((resolve, reject) => {
    stream.on("finish", () => resolve());
    stream.on("error", reject);
  });
  const parts: string[] = [];
  let chars = 0;
  for await (const line of rows) {
    parts.push(line);
    chars += line.length;
    if (chars >= 1 << 20) {
      await write(stream, parts.join(""));
      parts.length = 0;
      chars = 0;
    }
  }
  if (parts.length > 0) await write(stream, parts.join(""));
  stream.end();
  await done;
}

/** A running, tuned PostgreSQL without tables (see {@link startTunedPostgres}). */
export interface TunedPostgres {
  /** `postgres://app@127.0.0.1:<port>/bench`. */
  url: string;
  /** Stops the server and deletes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL under /tmp (test/support/postgres.ts), applies {@link PG_SETTINGS}
 * (ALTER SYSTEM, one restart), creates the database `bench` (UTF8, LC_COLLATE C, LC_CTYPE
 * C.UTF-8, so that pg_trgm indexes letters of every script), and in it the extensions pg_trgm
 * and pg_prewarm and the collation `ours` ({@link COLLATION_SQL}). A few seconds. The caller must
 * `stop()` it.
 * @throws when the server cannot start or restart (it is stopped first)
 */
export async function startTunedPostgres(): Promise<TunedPostgres> {
  const server: TestPostgres = startPostgres();
  let sql = postgres(server.url, { max: 1, onnotice: () => {} });
  try {
    const [{ data_directory: dataDir }] = await sql`SELECT current_setting('data_directory') AS data_directory`;
    for (const [name, value] of Object.entries(PG_SETTINGS)) await sql.unsafe(`ALTER SYSTEM SET ${name} = '${value}'`);
    await sql.end();
    restart(dataDir as string);
    sql = postgres(server.url, { max: 1, onnotice: () => {} });
    // A UTF-8 character classification (test/support's cluster is initdb'd --no-locale: C): with
    // LC_CTYPE C, pg_trgm sees no letters outside ASCII, extracts no trigram from a Greek or
    // Cyrillic needle, and its index then returns every row.
    await sql`CREATE DATABASE bench TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'`;
    await sql.end();
    const url = server.url.replace(/\/postgres$/, "/bench");
    sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`CREATE EXTENSION pg_trgm`;
    await sql`CREATE EXTENSION pg_prewarm`;
    await sql.unsafe(COLLATION_SQL);
    await sql.end();
    return { url, stop: () => server.stop() };
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    await server.stop();
    throw error;
  }
}

/** Reads every page of the tables and indexes whose name starts with `prefix` into shared_buffers (pg_prewarm), as a running server would have them. */
export async function prewarm(sql: postgres.Sql, prefix: string): Promise<void> {
  await sql`SELECT pg_prewarm(c.oid) FROM pg_class c WHERE c.relname LIKE ${`${prefix}%`} AND c.relkind IN ('r', 'i')`;
}

/** Writes `chunk` to a stream, waiting for 'drain' when its buffer is full. */
async function write(stream: Writable, chunk: string): Promise<void> {
  if (!stream.write(chunk)) await new Promise<void>((resolve) => stream.once("drain", () => resolve()));
}

/** A loaded, indexed PostgreSQL over one dataset (see {@link startLoadedPostgres}). */
export interface LoadedPostgres {
  /** `postgres://app@127.0.0.1:<port>/bench`. */
  url: string;
  /** Read (the peer column files), build (start, restart, COPY, indexes, VACUUM ANALYZE, prewarm) in ms; bytes = pg_total_relation_size('users'). */
  open: OpenReport;
  /** PostgreSQL's and ICU's versions, e.g. "PostgreSQL 15.18 (Debian …); ICU collator version 153.120". */
  version: string;
  /** Stops the server and deletes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts a tuned throwaway PostgreSQL ({@link startTunedPostgres}) and loads and indexes the
 * dataset: COPY of the six columns from the peer files, pg_trgm GIN indexes on the folded
 * columns, a B-tree per sort key (the `ours` collation on name and email), VACUUM ANALYZE, and
 * pg_prewarm. About 25 s at 1M rows on 2 cores. The caller must `stop()` it.
 * @throws when the server cannot start, an id is not an int4, or the row count differs after the load (the server is stopped first)
 */
export async function startLoadedPostgres(dataset: Dataset, log: (line: string) => void = () => {}): Promise<LoadedPostgres> {
  const t0 = performance.now();
  let cols: Awaited<ReturnType<typeof readPeerColumns>> | null = await readPeerColumns(dataset, { ranks: false });
  const t1 = performance.now();
  const server = await startTunedPostgres();
  const sql = postgres(server.url, { max: 1, onnotice: () => {} });
  try {
    log(`postgres: loading ${cols.rows} rows with COPY`);
    const c = cols;
    function* lines(): Generator<string> {
      for (let i = 0; i < c.rows; i++) {
        const id = c.ids[i];
        if (!Number.isInteger(id) || id < -(2 ** 31) || id >= 2 ** 31) throw new Error(`row ${i}: id ${id} is not an int4`);
        yield copyLine([id, c.names[i], c.emails[i], STATUS_VALUES[c.statusCodes[i]], c.namesFolded[i], c.emailsFolded[i]]);
      }
    }
    await sql.begin(async (tx) => {
      await tx`CREATE TABLE users (id integer NOT NULL, name text NOT NULL, email text NOT NULL, status text NOT NULL, name_folded text NOT NULL, email_folded text NOT NULL)`;
      await copyRows(tx, "users (id, name, email, status, name_folded, email_folded)", lines());
    });
    cols = null;
    const t2 = performance.now();
    log(`postgres: start, restart and COPY ${((t2 - t1) / 1000).toFixed(1)} s; indexing`);
    await sql`ALTER TABLE users ADD PRIMARY KEY (id)`;
    await sql`CREATE INDEX users_name ON users (name COLLATE ours, id)`;
    await sql`CREATE INDEX users_email ON users (email COLLATE ours, id)`;
    await sql`CREATE INDEX users_status ON users (status, id)`;
    // what a DBA adds for a grid filtered or ordered by status then name (Q4, Q8: status asc,
    // name desc, then the id tie-break descending)
    await sql`CREATE INDEX users_status_name ON users (status, name COLLATE ours DESC, id DESC)`;
    const t3 = performance.now();
    log(`postgres: B-trees ${((t3 - t2) / 1000).toFixed(1)} s`);
    await sql`CREATE INDEX users_name_trgm ON users USING gin (name_folded gin_trgm_ops)`;
    await sql`CREATE INDEX users_email_trgm ON users USING gin (email_folded gin_trgm_ops)`;
    const t4 = performance.now();
    log(`postgres: GIN trigram indexes ${((t4 - t3) / 1000).toFixed(1)} s`);
    await sql`VACUUM (ANALYZE) users`;
    // Warm the cache as a running server would be: every page of the table and its indexes read once.
    await prewarm(sql, "users");
    const t5 = performance.now();
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM users`;
    if (n !== dataset.rows) throw new Error(`postgres loaded ${n} rows, expected ${dataset.rows}`);
    const [{ bytes }] = await sql`SELECT pg_total_relation_size('users')::float8 AS bytes`;
    const [{ v }] = await sql`SELECT version() AS v`;
    const [{ icu }] = await sql`SELECT collversion AS icu FROM pg_collation WHERE collname = 'ours'`;
    await sql.end();
    return {
      url: server.url,
      open: { readMs: t1 - t0, buildMs: t5 - t1, bytes: bytes as number, bytesNote: "pg_total_relation_size('users'): table, TOAST and every index" },
      version: `${(v as string).split(" on ")[0]}; ICU collator version ${icu as string}`,
      stop: () => server.stop(),
    };
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    await server.stop();
    throw error;
  }
}

let loaded: LoadedPostgres | null = null;
let client: postgres.Sql | null = null;

export const postgresEngine: BenchEngine = {
  name: "postgres",
  note:
    "PostgreSQL 15 (own server under /tmp: shared_buffers 4GB, work_mem 256MB, 1 parallel worker, jit off) via the postgres driver, prepared statements on 1 connection; " +
    "COPY-loaded; ORDER BY the real strings under an ICU collation (en-u-ks-level1-kn-true, nondeterministic) with B-tree indexes (name COLLATE ours, id), (email COLLATE ours, id), (status, id), (status, name COLLATE ours DESC, id DESC), pk(id); " +
    "LIKE '%needle%' on precomputed folded text (in its favour) with pg_trgm GIN indexes",
  semantics: "same",
  maxRows: Number.POSITIVE_INFINITY,

  async open(dataset: Dataset): Promise<OpenReport> {
    loaded = await startLoadedPostgres(dataset, (line) => process.stderr.write(`  ${line}\n`));
    process.stderr.write(`  postgres: ${loaded.version}\n`);
    client = postgres(loaded.url, { max: 1, onnotice: () => {} });
    return loaded.open;
  },

  async run(query: Query): Promise<Answer> {
    const sql = toSql(peerPlan(query), postgresContains, POSTGRES_DIALECT);
    const db = client as postgres.Sql;
    const [count] = await db.unsafe(sql.countSql, sql.whereParams, { prepare: true });
    const rows = await db.unsafe(sql.pageSql, [...sql.whereParams, sql.limit, sql.offset], { prepare: true });
    const ids = new Array<number>(rows.length);
    for (let i = 0; i < rows.length; i++) ids[i] = rows[i].id as number;
    return { total: Number(count.n), ids, body: JSON.stringify(rows) };
  },

  fresh(): void {},

  async close(): Promise<void> {
    await client?.end({ timeout: 5 });
    client = null;
    await loaded?.stop();
    loaded = null;
  },
};

/** The engine under its module name, as bench/latency.ts looks engines up (`bench/engines/<name>.ts` exports `<name>`). */
export { postgresEngine as postgres };
