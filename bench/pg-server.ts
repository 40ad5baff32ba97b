/**
 * The HTTP peer: a plain handler over the `postgres` driver, the architecture of AG Grid's own
 * server-side examples (a Node server that turns each request's startRow/endRow/sortModel/
 * filterModel into one SQL SELECT with LIMIT/OFFSET, plus the count, over a connection pool).
 * It answers the query subset of the benchmark mixes (bench/http.ts), with ours' shapes:
 *
 * - `GET /api/users?page=&pageSize=|limit=&sortBy=|sort=&sortOrder=|order=&filter[name]=&filter[email]=&filter[status]=`
 *   → `{data, total, page, pageSize, pagination: {page, pageSize, total, totalPages}, meta}`;
 * - `POST /api/users` with `{startRow, endRow, sortModel: [{colId, sort}], filterModel}` (text
 *   `contains` on name/email, set on status) → `{data, total}`.
 *
 * Each request: parse → a plan (bench/engines/engine.ts PeerPlan) → SQL with parameters
 * (bench/engines/sql.ts with PostgreSQL's dialect: ICU-collated ORDER BY ending with the id
 * tie-break, `LIKE '%needle%'` on the folded columns) → the count and the page sent at once on two
 * pooled connections (prepared statements) → JSON. Anything else is a 400 or 404 (the mixes
 * send nothing else). It validates far less than ours does.
 *
 * Usage: `bun bench/pg-server.ts <postgres url> [pool size, default 8]`; prints `{"url": …}` on
 * stdout when listening. The database must hold bench/engines/postgres.ts's table and collation.
 */
import postgres from "postgres";
import { fold } from "../src/collation/collation.ts";
import { STATUS_VALUES } from "../src/generate/record.ts";
import type { PeerPlan, PeerSortColumn } from "./engines/engine.ts";
import { POSTGRES_DIALECT, postgresContains } from "./engines/postgres.ts";
import { toSql } from "./engines/sql.ts";

/** Connections in the pool when not given: 4 per core on this 2-core machine. */
export const DEFAULT_POOL = 8;
/** The largest window a request may ask for (ours' default largest page size). */
const MAX_ROWS = 1000;

/** A request the handler does not serve: answered 400 with the message. */
class BadRequest extends Error {}

/** The plan column of a sortable column id. */
function sortColumn(colId: string): PeerSortColumn {
  if (colId === "id" || colId === "status") return colId;
  if (colId === "name") return "name_rank";
  if (colId === "email") return "email_rank";
  throw new BadRequest(`cannot sort on ${JSON.stringify(colId)}`);
}

/** Status codes of a list of values, any case. */
function statusCodes(values: unknown[]): number[] {
  const codes = new Set<number>();
  for (const v of values) {
    const code = STATUS_VALUES.indexOf(String(v).toLowerCase() as (typeof STATUS_VALUES)[number]);
    if (code < 0) throw new BadRequest(`unknown status ${JSON.stringify(v)}`);
    codes.add(code);
  }
  return [...codes].sort((a, b) => a - b);
}

/** Ends a plan's order with the id tie-break (ascending unless the last key is descending; id when no sort). */
function tieBreak(plan: PeerPlan): void {
  const last = plan.order[plan.order.length - 1];
  if (last === undefined || last.column !== "id") plan.order.push({ column: "id", desc: last !== undefined && last.desc });
}

/** A whole number from a query parameter, or the default. */
function intParam(text: string | null, fallback: number, min: number): number {
  if (text === null || text === "") return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new BadRequest(`bad number ${JSON.stringify(text)}`);
  return n;
}

/** GET: the plan and what the answer echoes. */
function planOfGet(params: URLSearchParams): { plan: PeerPlan; page: number; pageSize: number; meta: Record<string, unknown> } {
  const page = intParam(params.get("page"), 1, 1);
  const pageSize = intParam(params.get("pageSize") ?? params.get("limit"), 10, 1);
  if (pageSize > MAX_ROWS) throw new BadRequest(`pageSize above ${MAX_ROWS}`);
  const plan: PeerPlan = { contains: [], statusCodes: null, order: [], offset: (page - 1) * pageSize, limit: pageSize };
  const meta: Record<string, unknown> = {};
  const sortBy = params.get("sortBy") ?? params.get("sort");
  if (sortBy !== null && sortBy !== "") {
    const order = (params.get("sortOrder") ?? params.get("order") ?? "asc").toLowerCase();
    if (order !== "asc" && order !== "desc") throw new BadRequest(`bad sortOrder ${JSON.stringify(order)}`);
    plan.order.push({ column: sortColumn(sortBy), desc: order === "desc" });
    meta.sortBy = sortBy;
    meta.sortOrder = order;
  }
  tieBreak(plan);
  const filters: Record<string, string> = {};
  for (const column of ["name", "email"] as const) {
    const value = params.get(`filter[${column}]`);
    if (value !== null && value !== "") {
      plan.contains.push({ column: column === "name" ? "name_folded" : "email_folded", needle: fold(value) });
      filters[column] = value;
    }
  }
  const status = params.get("filter[status]");
  if (status !== null && status !== "") {
    plan.statusCodes = statusCodes(status.split(","));
    filters.status = plan.statusCodes.map((c) => STATUS_VALUES[c]).join(",");
  }
  if (Object.keys(filters).length > 0) meta.filters = filters;
  return { plan, page, pageSize, meta };
}

/** AG Grid's POST body: the plan. */
function planOfPost(body: Record<string, unknown>): PeerPlan {
  const startRow = typeof body.startRow === "number" ? body.startRow : 0;
  const endRow = typeof body.endRow === "number" ? body.endRow : startRow + 100;
  if (!Number.isInteger(startRow) || !Number.isInteger(endRow) || startRow < 0 || endRow < startRow || endRow - startRow > MAX_ROWS) throw new BadRequest("bad startRow/endRow");
  const plan: PeerPlan = { contains: [], statusCodes: null, order: [], offset: startRow, limit: endRow - startRow };
  const seen = new Set<string>();
  for (const key of (body.sortModel ?? []) as { colId: string; sort: string }[]) {
    if (seen.has(key.colId)) continue;
    seen.add(key.colId);
    plan.order.push({ column: sortColumn(key.colId), desc: key.sort === "desc" });
    if (key.colId === "id") break;
  }
  tieBreak(plan);
  for (const [column, model] of Object.entries((body.filterModel ?? {}) as Record<string, { filterType?: string; type?: string; filter?: unknown; values?: unknown[] }>)) {
    if ((column === "name" || column === "email") && (model.filterType ?? "text") === "text" && (model.type ?? "contains") === "contains") {
      plan.contains.push({ column: column === "name" ? "name_folded" : "email_folded", needle: fold(String(model.filter ?? "")) });
    } else if (column === "status" && model.filterType === "set" && Array.isArray(model.values)) {
      const codes = statusCodes(model.values);
      plan.statusCodes = plan.statusCodes === null ? codes : plan.statusCodes.filter((c) => codes.includes(c));
    } else {
      throw new BadRequest(`filter on ${column} not served`);
    }
  }
  return plan;
}

/** Runs a plan: the count and the page at once, on two pooled connections. */
async function execute(sql: postgres.Sql, plan: PeerPlan): Promise<{ total: number; rows: postgres.Row[] }> {
  const q = toSql(plan, postgresContains, POSTGRES_DIALECT);
  const [count, rows] = await Promise.all([
    sql.unsafe(q.countSql, q.whereParams, { prepare: true }),
    sql.unsafe(q.pageSql, [...q.whereParams, q.limit, q.offset], { prepare: true }),
  ]);
  return { total: Number(count[0].n), rows };
}

/** A JSON answer. */
function json(status: number, body: string): Response {
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}

/**
 * Starts the server on 127.0.0.1 (port 0: a free one) over the database at `url`, with a pool of
 * `pool` connections. Returns the server and the pool; stop both to end.
 */
export function startPgServer(url: string, pool = DEFAULT_POOL): { server: ReturnType<typeof Bun.serve>; sql: postgres.Sql } {
  const sql = postgres(url, { max: pool, onnotice: () => {} });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    development: false,
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== "/api/users") return json(404, '{"error":"not found"}');
      try {
        if (request.method === "GET") {
          const { plan, page, pageSize, meta } = planOfGet(url.searchParams);
          const { total, rows } = await execute(sql, plan);
          const pagination = { page, pageSize, total, totalPages: Math.ceil(total / pageSize) };
          return json(200, JSON.stringify({ data: rows, total, page, pageSize, pagination, meta }));
        }
        if (request.method === "POST") {
          const text = await request.text();
          const body = (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>;
          const { total, rows } = await execute(sql, planOfPost(body));
          return json(200, JSON.stringify({ data: rows, total }));
        }
        return json(405, '{"error":"method not allowed"}');
      } catch (error) {
        if (error instanceof BadRequest || error instanceof SyntaxError) return json(400, JSON.stringify({ error: (error as Error).message }));
        return json(500, JSON.stringify({ error: (error as Error).message }));
      }
    },
  });
  return { server, sql };
}

if (import.meta.main) {
  const url = process.argv[2];
  if (url === undefined) {
    process.stderr.write("usage: bun bench/pg-server.ts <postgres url> [pool size]\n");
    process.exit(2);
  }
  const { server, sql } = startPgServer(url, process.argv[3] === undefined ? DEFAULT_POOL : Number(process.argv[3]));
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.port}` })}\n`);
  process.on("SIGTERM", async () => {
    server.stop(true);
    await sql.end({ timeout: 1 });
    process.exit(0);
  });
}
