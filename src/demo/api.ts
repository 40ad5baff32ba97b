/**
 * What the demo page's clients share about the API (docs/api.md "GET /api/users", "POST
 * /api/users", "Any users table"): the row and schema types, where the API lives (the one
 * place the page reads its base path from), and the credential every request carries.
 */

/** One row as the service returns it: every column of the served schema by id (docs/api.md "Any users table: the schema"). */
export type Row = Record<string, unknown>;

/** The kinds of column a schema holds (docs/api.md "Any users table: the schema"). */
export type ColumnKind = "number" | "text" | "enum" | "date" | "datetime" | "boolean" | "json";

/** One column of the served snapshot (GET /api/users/schema). */
export interface SchemaColumn {
  id: string;
  kind: ColumnKind;
  /** An enum's values, in their sort order. */
  values?: string[];
}

/** The body of GET /api/users/schema. */
export interface SchemaBody {
  /** Every column, in schema order (the order records hold them). */
  columns: SchemaColumn[];
  /** The key column's id (docs/api.md "Any users table: the schema"); absent from a server that predates it, then the first column is taken. */
  key?: string;
  /** The enum column that partitions the rows, or null (informational). */
  partition?: string | null;
  /** Rows in the snapshot. */
  rows: number;
  snapshotId: string;
}

/** The part of a GET /api/users success body the TanStack client reads (shape A/B). */
export interface GetRowsBody {
  data: Row[];
  /** Rows matching the filters, in rows. */
  total: number;
  /** 1-based page number echoed back. */
  page: number;
  /** Rows per page echoed back. */
  pageSize: number;
}

/** The key column's id of a schema body: its `key`, else its first column. */
export function keyOf(schema: SchemaBody): string {
  return schema.key ?? schema.columns[0]?.id ?? "id";
}

/** A cell as the pages show it: json values as JSON text, null as empty, everything else as its output string. */
export function cellText(column: SchemaColumn, value: unknown): string {
  if (value === null || value === undefined) return "";
  return column.kind === "json" ? JSON.stringify(value) : String(value);
}

/** The API base path when the page does not name one: the default resource (docs/api.md). */
export const DEFAULT_API_BASE = "/api/users";

/**
 * The API's base path (e.g. `/api/users`, or `/api/customers` under `serve --resource
 * customers`): the `data-api-base` attribute of the page's root element (`<html>`), which is
 * where a server serving the page under another resource name sets it; {@link DEFAULT_API_BASE}
 * when the attribute is absent or blank. Trailing slashes are dropped (a path with one is a 404).
 * This is the only place the page learns where the API is.
 */
export function apiBase(root: HTMLElement = document.documentElement): string {
  const value = (root.dataset.apiBase ?? "").trim().replace(/\/+$/, "");
  return value === "" ? DEFAULT_API_BASE : value;
}

/** The sessionStorage entry that keeps the credential for the tab's lifetime (never localStorage). */
export const CREDENTIAL_STORAGE_KEY = "users-listing-demo.authorization";

/**
 * The credential as a user may paste it: surrounding white space and a leading `Bearer ` (any
 * case) dropped, since the page adds the scheme itself.
 * @returns the bare token or key; "" for none
 */
export function normalizeCredential(text: string): string {
  return text.trim().replace(/^bearer\s+/i, "").trim();
}

/** The credential remembered for this tab, or "" (also when storage is unavailable). */
export function storedCredential(): string {
  try {
    return sessionStorage.getItem(CREDENTIAL_STORAGE_KEY) ?? "";
  } catch {
    return "";
  }
}

/**
 * Remembers `credential` for this tab (sessionStorage), or forgets it when it is "".
 * @returns false when the browser refuses storage (the credential then lasts until the page reloads)
 */
export function storeCredential(credential: string): boolean {
  try {
    if (credential === "") sessionStorage.removeItem(CREDENTIAL_STORAGE_KEY);
    else sessionStorage.setItem(CREDENTIAL_STORAGE_KEY, credential);
    return true;
  } catch {
    return false;
  }
}

/** The credential the page sends now: read from storage once, replaced by {@link setCredential}. */
let credential: string | null = null;

/** The credential every request sends (`Authorization: Bearer <it>`), "" for none. */
export function currentCredential(): string {
  credential ??= storedCredential();
  return credential;
}

/** Uses `value` (normalized) for every later request and remembers it for the tab. */
export function setCredential(value: string): void {
  credential = normalizeCredential(value);
  storeCredential(credential);
}

/**
 * `fetch` of an API URL with the page's credential: `Authorization: Bearer <credential>` when one
 * is set (docs/api.md "HTTP envelope", API keys), nothing otherwise. Every request of the page
 * to the API goes through here.
 * @param url a path under {@link apiBase}
 */
export function apiFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = currentCredential();
  if (token !== "") headers.set("authorization", `Bearer ${token}`);
  return fetch(url, { ...init, headers });
}

/** A problem+json body (RFC 9457) as the API sends it with every error (docs/api.md "Errors"). */
export interface ProblemBody {
  title?: string;
  status?: number;
  detail?: string;
  /** Each bad parameter (GET) or body field (POST). */
  errors?: { parameter?: string; pointer?: string; detail: string }[];
}

/** The problem body of a failed response, or an empty one when the body is not JSON. */
export async function problemOf(response: Response): Promise<ProblemBody> {
  try {
    const body = (await response.json()) as unknown;
    return typeof body === "object" && body !== null ? (body as ProblemBody) : {};
  } catch {
    return {};
  }
}

/**
 * One line saying why a request failed: `HTTP <status>: <detail>`; a 401 adds where the key
 * goes, a 403 (access control: docs/api.md "Access control") that another credential is needed.
 */
export function failureText(status: number, problem: ProblemBody): string {
  const detail = problem.detail ?? problem.title ?? "";
  const text = `HTTP ${status}${detail === "" ? "" : `: ${detail}`}`;
  if (status === 401) return `${text} — enter a key or token in the Authorization field`;
  return status === 403 ? `${text} — enter another key or token in the Authorization field` : text;
}

/**
 * Saves an export response's body as a file named by its `Content-Disposition` (docs/api.md
 * "Export": `<resource>-<snapshotId>.<ext>`).
 * @param fallbackName the file name when the response names none
 * @returns the number of bytes saved
 * @throws Error when the response is not a success (its problem's detail in the message)
 */
export async function saveDownload(response: Response, fallbackName: string): Promise<number> {
  if (!response.ok) throw new Error(`export failed (${failureText(response.status, await problemOf(response))})`);
  const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1] ?? fallbackName;
  const blob = await response.blob();
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  return blob.size;
}
