/**
 * The SQL both SQL peers (SQLite, DuckDB) run: one count and one page query per request, over
 * the table `users(id, name, email, status, name_folded, email_folded, name_rank, email_rank)`.
 */
import { STATUS_VALUES } from "../../src/schema.ts";
import type { PeerPlan } from "./engine.ts";

/** The columns, in table order. */
export const SQL_COLUMNS = ["id", "name", "email", "status", "name_folded", "email_folded", "name_rank", "email_rank"] as const;

/** A count and a page statement with their parameters. */
export interface SqlQuery {
  countSql: string;
  pageSql: string;
  /** Parameters of the WHERE clause (both statements), then LIMIT and OFFSET (page only). */
  whereParams: string[];
  limit: number;
  offset: number;
}

/**
 * The statements of a plan. `containsSql(column)` is the dialect's substring test with one
 * `?` parameter (SQLite: `instr(col, ?) > 0`; DuckDB: `contains(col, ?)`).
 */
export function toSql(plan: PeerPlan, containsSql: (column: string) => string): SqlQuery {
  const where: string[] = [];
  const whereParams: string[] = [];
  if (plan.statusCodes !== null) {
    if (plan.statusCodes.length === 0) where.push("FALSE");
    else {
      where.push(plan.statusCodes.length === 1 ? "status = ?" : `status IN (${plan.statusCodes.map(() => "?").join(", ")})`);
      for (const code of plan.statusCodes) whereParams.push(STATUS_VALUES[code]);
    }
  }
  for (const test of plan.contains) {
    where.push(containsSql(test.column));
    whereParams.push(test.needle);
  }
  const whereSql = where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`;
  // 'active' < 'inactive' in binary order too, so status sorts as its collation order.
  const orderSql = plan.order.map((k) => `${k.column}${k.desc ? " DESC" : ""}`).join(", ");
  return {
    countSql: `SELECT count(*) AS n FROM users${whereSql}`,
    pageSql: `SELECT id, name, email, status FROM users${whereSql} ORDER BY ${orderSql} LIMIT ? OFFSET ?`,
    whereParams,
    limit: plan.limit,
    offset: plan.offset,
  };
}
