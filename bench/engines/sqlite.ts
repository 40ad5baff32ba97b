/**
 * bun:sqlite, in memory: a table with folded lower-case columns for matching (`instr` on folded
 * text, exact substring semantics) and an integer collation-rank column per string column
 * (computed from our snapshot's rankByRow) so that its ORDER BY gives exactly our order — help
 * in its favour. Indexes: id (INTEGER PRIMARY KEY), status, name_rank, email_rank (an index on
 * the text columns cannot serve a substring test).
 */
import { Database, type Statement } from "bun:sqlite";
import type { BenchQueryShape as Query } from "../query-model.ts";
import { STATUS_VALUES } from "../../src/generate/record.ts";
import { type Dataset, readPeerColumns } from "../datasets.ts";
import { type Answer, type BenchEngine, type OpenReport, peerPlan } from "./engine.ts";
import { toSql } from "./sql.ts";

let db: Database | null = null;
const statements = new Map<string, Statement>();

/** A prepared statement, cached by its text. */
function prepared(sql: string): Statement {
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = (db as Database).prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

export const sqlite: BenchEngine = {
  name: "sqlite",
  note: "bun:sqlite :memory:, indexes on id/status/name_rank/email_rank; ORDER BY precomputed collation ranks, instr() on precomputed folded text (both in its favour)",
  semantics: "same",
  maxRows: Number.POSITIVE_INFINITY,

  async open(dataset: Dataset): Promise<OpenReport> {
    const t0 = performance.now();
    let c: Awaited<ReturnType<typeof readPeerColumns>> | null = await readPeerColumns(dataset);
    const t1 = performance.now();
    db = new Database(":memory:");
    db.exec("PRAGMA journal_mode = OFF");
    db.exec("PRAGMA synchronous = OFF");
    db.exec("PRAGMA temp_store = MEMORY");
    db.exec(
      "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, status TEXT NOT NULL, name_folded TEXT NOT NULL, email_folded TEXT NOT NULL, name_rank INTEGER NOT NULL, email_rank INTEGER NOT NULL)",
    );
    const insert = db.prepare("INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    const cols = c;
    const insertAll = db.transaction(() => {
      for (let i = 0; i < cols.rows; i++) {
        insert.run(cols.ids[i], cols.names[i], cols.emails[i], STATUS_VALUES[cols.statusCodes[i]], cols.namesFolded[i], cols.emailsFolded[i], cols.nameRanks[i], cols.emailRanks[i]);
      }
    });
    insertAll();
    db.exec("CREATE INDEX users_status ON users(status)");
    db.exec("CREATE INDEX users_name_rank ON users(name_rank)");
    db.exec("CREATE INDEX users_email_rank ON users(email_rank)");
    db.exec("ANALYZE");
    const t2 = performance.now();
    c = null;
    const pages = db.query("PRAGMA page_count").get() as { page_count: number };
    const pageSize = db.query("PRAGMA page_size").get() as { page_size: number };
    return { readMs: t1 - t0, buildMs: t2 - t1, bytes: pages.page_count * pageSize.page_size, bytesNote: "database pages in memory" };
  },

  run(query: Query): Answer {
    const sql = toSql(peerPlan(query), (column) => `instr(${column}, ?) > 0`);
    const count = prepared(sql.countSql).get(...sql.whereParams) as { n: number };
    const rows = prepared(sql.pageSql).all(...sql.whereParams, sql.limit, sql.offset) as { id: number }[];
    const ids = new Array<number>(rows.length);
    for (let i = 0; i < rows.length; i++) ids[i] = rows[i].id;
    return { total: count.n, ids, body: JSON.stringify(rows) };
  },

  fresh(): void {},

  close(): void {
    for (const statement of statements.values()) statement.finalize();
    statements.clear();
    db?.close();
    db = null;
  },
};
