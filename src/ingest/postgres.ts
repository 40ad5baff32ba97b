/**
 * Users from PostgreSQL (`snapshot build --from postgres://… --table T | --query SQL`): the rows
 * of a table or a query, streamed through a cursor (never the whole result in memory), each
 * row rendered by the server as JSON (`row_to_json`) and validated exactly as an NDJSON record
 * is (records.ts `addJsonRecord`: the seed's four, ids within ±2^53, every other column kept).
 * The columns' PostgreSQL types decide their kinds (docs/api.md "Columns beyond the four"):
 * integer, bigint, numeric, real, double → number; text, varchar, char, uuid, name → text;
 * enum types → enum with their declared order; date → date; timestamp, timestamptz →
 * datetime; boolean → boolean; json, jsonb → json. Other types are refused with the column's
 * name (cast them in `--query`). The client is the `postgres` package.
 */
import postgres from "postgres";
import type { ColumnSpec } from "../schema/kinds.ts";
import { ColumnsBuilder, IngestError, type RawColumns, addJsonRecord, findFirstDuplicate, parseErrorText } from "./records.ts";
import { duplicateError } from "./read.ts";

/** Where the rows come from: a table (optionally schema-qualified) or a query. */
export interface PostgresSource {
  /** A connection URL, `postgres://user:password@host:port/database`. */
  url: string;
  table?: string;
  query?: string;
}

/** What a PostgreSQL read gives the build: the columns, and the kinds the types declare. */
export interface PostgresRead {
  columns: RawColumns;
  /** A spec per column beyond the seed's four, in result order (what `--schema` would list). */
  declared: ColumnSpec[];
  /** The source's name in error messages: `postgres:<table>` or `postgres:query`. */
  name: string;
}

/** Rows fetched per cursor round trip. */
const CURSOR_ROWS = 10_000;

/** Type OIDs (pg_type) of each kind's types. */
const KIND_OF_TYPE: Record<number, ColumnSpec["kind"]> = {
  20: "number", // int8
  21: "number", // int2
  23: "number", // int4
  700: "number", // float4
  701: "number", // float8
  1700: "number", // numeric
  25: "text", // text
  1043: "text", // varchar
  1042: "text", // bpchar
  19: "text", // name
  2950: "text", // uuid
  16: "boolean",
  1082: "date",
  1114: "datetime", // timestamp (read as UTC)
  1184: "datetime", // timestamptz
  114: "json",
  3802: "json", // jsonb
};

/** A table name as a quoted identifier: `schema.table` → `"schema"."table"`. */
export function quoteTable(table: string): string {
  return table
    .split(".")
    .map((part) => `"${part.replaceAll('"', '""')}"`)
    .join(".");
}

/**
 * Reads every row of `source` into columns.
 * @param onProgress rows read so far and the rows the source holds (counted first)
 * @throws IngestError (`postgres:<table>:<row>: reason`, rows counted from 1) for the first bad
 *   row (as for an NDJSON record) or a duplicate id; `postgres:<table>:1: …` for a column of a
 *   type no kind holds, and for a connection or SQL error (its message)
 */
export async function readPostgres(source: PostgresSource, onProgress?: (rows: number, total: number) => void): Promise<PostgresRead> {
  if ((source.table === undefined) === (source.query === undefined)) throw new Error("readPostgres: give a table or a query, not both");
  const name = source.table !== undefined ? `postgres:${source.table}` : "postgres:query";
  const from = source.table !== undefined ? `SELECT * FROM ${quoteTable(source.table)}` : (source.query as string);
  const sql = postgres(source.url, { max: 1, onnotice: () => {}, connection: { TimeZone: "UTC", application_name: "users-listing snapshot build" } });
  const failed = (error: unknown): never => {
    if (error instanceof IngestError) throw error;
    throw new IngestError(name, 1, `PostgreSQL: ${parseErrorText(error)}`);
  };
  try {
    const meta = await sql.unsafe(`SELECT * FROM (${from}) AS t LIMIT 0`).catch(failed);
    const oids = meta.columns.map((c) => c.type);
    const types = await sql<{ oid: number; typname: string; typtype: string; labels: string[] | null }[]>`
      SELECT t.oid::int AS oid, t.typname, t.typtype,
        (SELECT array_agg(e.enumlabel ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid) AS labels
      FROM pg_type t WHERE t.oid = ANY(${oids})`.catch(failed);
    const typeOf = new Map(types.map((t) => [t.oid, t]));
    const declared: ColumnSpec[] = [];
    for (const column of meta.columns) {
      if (["id", "name", "email", "status"].includes(column.name)) continue;
      const type = typeOf.get(column.type);
      if (type?.typtype === "e") declared.push({ id: column.name, kind: "enum", values: type.labels ?? [] });
      else if (KIND_OF_TYPE[column.type] !== undefined) declared.push({ id: column.name, kind: KIND_OF_TYPE[column.type] });
      else throw new IngestError(name, 1, `column "${column.name}" has type ${type?.typname ?? column.type}, which no column kind holds; cast it in --query (to text, say)`);
    }
    const [{ count }] = await sql.unsafe(`SELECT count(*)::float8 AS count FROM (${from}) AS t`).catch(failed);
    const total = Number(count);
    const builder = new ColumnsBuilder();
    let row = 0;
    try {
      const cursor = sql.unsafe(`SELECT row_to_json(t)::text AS r FROM (${from}) AS t`).cursor(CURSOR_ROWS);
      for await (const rows of cursor) {
        for (const { r } of rows as unknown as { r: string }[]) {
          row++;
          addJsonRecord(name, builder, JSON.parse(r), row, r);
        }
        onProgress?.(row, total);
      }
    } catch (error) {
      // the first bad row in row order: a duplicate id on an earlier row wins
      const duplicate = findFirstDuplicate(builder.ids, builder.n);
      if (duplicate !== null) throw duplicateError(name, builder, duplicate);
      failed(error);
    }
    const duplicate = findFirstDuplicate(builder.ids, builder.n);
    if (duplicate !== null) throw duplicateError(name, builder, duplicate);
    return { columns: builder.finish(), declared, name };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
