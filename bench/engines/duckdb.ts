/**
 * DuckDB (@duckdb/node-api, in memory): the same eight columns as SQLite, loaded with read_csv
 * from the cached CSV (its fastest load path; the JS appender is several times slower), with
 * ART indexes on status, name_rank and email_rank (DuckDB uses them for point lookups, not for
 * ORDER BY … LIMIT). Ordering by the precomputed rank columns and `contains()` on the
 * precomputed folded columns give exactly our semantics — help in its favour.
 */
import { type DuckDBConnection, DuckDBInstance, type DuckDBPreparedStatement } from "@duckdb/node-api";
import type { BenchQueryShape as Query } from "../query-model.ts";
import type { Dataset } from "../datasets.ts";
import { type Answer, type BenchEngine, type OpenReport, peerPlan } from "./engine.ts";
import { toSql } from "./sql.ts";

let instance: DuckDBInstance | null = null;
let connection: DuckDBConnection | null = null;
const statements = new Map<string, DuckDBPreparedStatement>();

/** A prepared statement, cached by its text. */
async function prepared(sql: string): Promise<DuckDBPreparedStatement> {
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = await (connection as DuckDBConnection).prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

/** Binds the WHERE parameters (VARCHAR) and, for the page, LIMIT and OFFSET. */
function bind(statement: DuckDBPreparedStatement, params: string[], window?: { limit: number; offset: number }): void {
  statement.clearBindings();
  for (let i = 0; i < params.length; i++) statement.bindVarchar(i + 1, params[i]);
  if (window !== undefined) {
    statement.bindBigInt(params.length + 1, BigInt(window.limit));
    statement.bindBigInt(params.length + 2, BigInt(window.offset));
  }
}

export const duckdb: BenchEngine = {
  name: "duckdb",
  note: "DuckDB :memory: via @duckdb/node-api, read_csv + ART indexes on status/name_rank/email_rank; ORDER BY precomputed ranks, contains() on precomputed folded text (in its favour)",
  semantics: "same",
  maxRows: Number.POSITIVE_INFINITY,

  async open(dataset: Dataset): Promise<OpenReport> {
    const t0 = performance.now();
    instance = await DuckDBInstance.create(":memory:");
    connection = await instance.connect();
    const csv = dataset.csv.replaceAll("'", "''");
    await connection.run(
      `CREATE TABLE users AS SELECT * FROM read_csv('${csv}', header = true, quote = '"', escape = '"', ` +
        "force_not_null = ['name', 'email', 'name_folded', 'email_folded'], " +
        "columns = {'id': 'INTEGER', 'name': 'VARCHAR', 'email': 'VARCHAR', 'status': 'VARCHAR', 'name_folded': 'VARCHAR', 'email_folded': 'VARCHAR', 'name_rank': 'UINTEGER', 'email_rank': 'UINTEGER'})",
    );
    await connection.run("CREATE INDEX users_status ON users(status)");
    await connection.run("CREATE INDEX users_name_rank ON users(name_rank)");
    await connection.run("CREATE INDEX users_email_rank ON users(email_rank)");
    const t1 = performance.now();
    const rows = (await connection.runAndReadAll("SELECT count(*) AS n FROM users")).getRowObjectsJS()[0].n;
    if (Number(rows) !== dataset.rows) throw new Error(`duckdb loaded ${rows} rows, expected ${dataset.rows}`);
    const memory = (await connection.runAndReadAll("SELECT sum(memory_usage_bytes) AS b FROM duckdb_memory()")).getRowObjectsJS()[0].b;
    return { readMs: 0, buildMs: t1 - t0, bytes: Number(memory), bytesNote: "duckdb_memory() in use" };
  },

  async run(query: Query): Promise<Answer> {
    const sql = toSql(peerPlan(query), (column) => `contains(${column}, ?)`);
    const count = await prepared(sql.countSql);
    bind(count, sql.whereParams);
    const total = Number((await count.runAndReadAll()).getRowsJS()[0][0]);
    const page = await prepared(sql.pageSql);
    bind(page, sql.whereParams, sql);
    const rows = (await page.runAndReadAll()).getRowObjectsJS() as { id: number }[];
    const ids = new Array<number>(rows.length);
    for (let i = 0; i < rows.length; i++) ids[i] = rows[i].id;
    return { total, ids, body: JSON.stringify(rows) };
  },

  fresh(): void {},

  close(): void {
    for (const statement of statements.values()) statement.destroySync?.();
    statements.clear();
    connection?.closeSync();
    instance?.closeSync();
    connection = null;
    instance = null;
  },
};
