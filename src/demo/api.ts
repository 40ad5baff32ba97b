/**
 * What the demo page's clients read from /api/users (docs/api.md "GET /api/users" and
 * "POST /api/users"): plain types shared by the browser code.
 */

/** One user row as the service returns it (docs/api.md "Columns"). */
export interface UserRow {
  id: number;
  name: string;
  email: string;
  status: "active" | "inactive";
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
