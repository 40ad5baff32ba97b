/**
 * The SQL the SQL peers (SQLite, DuckDB, PostgreSQL) run: one count and one page query per
 * request, over the table `users(id, name, email, status, name_folded, email_folded[, name_rank,
 * email_rank])`. SQLite and DuckDB order by the precomputed rank columns; PostgreSQL orders the
 * real strings under an ICU collation (a {@link SqlDialect}).
 */
import { STATUS_VALUES } from "../../src/generate/record.ts";
import type { PeerPlan, PeerSortColumn } from "./engine.ts";

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
 * What differs between SQL dialects beyond the substring test. Every field is optional; the
 * defaults are SQLite's and DuckDB's: `?` placeholders, contains parameters passed as the folded
 * needle, ORDER BY the plan's columns (the rank columns) as they are.
 */
export interface SqlDialect {
  /** The placeholder of the 1-based parameter `index` (PostgreSQL: `$1`, `$2`, …); default `?`. */
  placeholder?: (index: number) => string;
  /** The parameter value bound for a contains test's folded needle (PostgreSQL: a LIKE pattern `%needle%`); default the needle. */
  containsParam?: (needle: string) => string;
  /** The ORDER BY expression of a plan column (PostgreSQL: `name COLLATE ours` for `name_rank`); default the column name. */
  orderExpression?: (column: PeerSortColumn) => string;
}

/**
 * The statements of a plan. `containsSql(column, placeholder)` is the dialect's substring test on
 * a folded column with one parameter, written with `placeholder` (SQLite: `instr(col, ?) > 0`;
 * DuckDB: `contains(col, ?)`; PostgreSQL: `col LIKE $1`). Both statements share the WHERE
 * parameters, so in a numbered dialect the page's LIMIT and OFFSET are the two numbers after them.
 */
export function toSql(plan: PeerPlan, containsSql: (column: string, placeholder: string) => string, dialect: SqlDialect = {}): SqlQuery {
  const placeholder = dialect.placeholder ?? (() => "?");
  const containsParam = dialect.containsParam ?? ((needle: string) => needle);
  const orderExpression = dialect.orderExpression ?? ((column: PeerSortColumn) => column);
  const where: string[] = [];
  const whereParams: string[] = [];
  const next = () => placeholder(whereParams.length + 1);
  if (plan.statusCodes !== null) {
    if (plan.statusCodes.length === 0) where.push("FALSE");
    else {
      const marks: string[] = [];
      for (const code of plan.statusCodes) {
        marks.push(next());
        whereParams.push(STATUS_VALUES[code]);
      }
      where.push(marks.length === 1 ? `status = ${marks[0]}` : `status IN (${marks.join(", ")})`);
    }
  }
  for (const test of plan.contains) {
    where.push(containsSql(test.column, next()));
    whereParams.push(containsParam(test.needle));
  }
  const whereSql = where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`;
  // 'active' < 'inactive' in binary order too, so status sorts as its collation order.
  const orderSql = plan.order.map((k) => `${orderExpression(k.column)}${k.desc ? " DESC" : ""}`).join(", ");
  const n = whereParams.length;
  return {
    countSql: `SELECT count(*) AS n FROM users${whereSql}`,
    pageSql: `SELECT id, name, email, status FROM users${whereSql} ORDER BY ${orderSql} LIMIT ${placeholder(n + 1)} OFFSET ${placeholder(n + 2)}`,
    whereParams,
    limit: plan.limit,
    offset: plan.offset,
  };
}
