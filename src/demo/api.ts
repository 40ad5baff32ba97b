/**
 * What the demo page's clients read from /api/users (docs/api.md "GET /api/users" and
 * "POST /api/users"): plain types shared by the browser code.
 */

/** One user row as the service returns it (docs/api.md "Columns"): the seed's four, then any added columns. */
export interface UserRow {
  id: number;
  name: string;
  email: string;
  status: "active" | "inactive";
  [column: string]: unknown;
}

/** One column of the served snapshot (GET /api/users/schema; docs/api.md "Columns beyond the four"). */
export interface SchemaColumn {
  id: string;
  kind: "number" | "text" | "enum" | "date" | "datetime" | "boolean" | "json";
  /** An enum's values, in their sort order. */
  values?: string[];
}

/** The body of GET /api/users/schema. */
export interface SchemaBody {
  columns: SchemaColumn[];
  /** Rows in the snapshot. */
  rows: number;
  snapshotId: string;
}

/** A cell as the pages show it: json values as JSON text, null as empty. */
export function cellText(column: SchemaColumn, value: unknown): string {
  if (value === null || value === undefined) return "";
  return column.kind === "json" ? JSON.stringify(value) : String(value);
}

/** The part of a GET /api/users success body the TanStack client reads (shape A/B). */
export interface GetUsersBody {
  data: UserRow[];
  /** Rows matching the filters, in rows. */
  total: number;
  /** 1-based page number echoed back. */
  page: number;
  /** Rows per page echoed back. */
  pageSize: number;
}
