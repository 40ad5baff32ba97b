/**
 * A browser page on another origin lists users with an API key (docs/api.md "HTTP envelope":
 * CORS and API keys): the page, served by a separate server on another port, sends a GET and a
 * filtered POST (preflighted: JSON content type and an Authorization header) with
 * `Authorization: Bearer <key>`, reads the exposed ETag and X-Snapshot-Id, and is refused
 * without the key; a page on an origin that is not allowed cannot read the answers at all.
 *
 * Needs /usr/bin/chromium (`sh scripts/install-chromium.sh`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseCorsOrigins } from "../../src/http/cors.ts";
import { USER_COLUMN_SPECS, USER_KEY, type UserRecord } from "../../src/generate/record.ts";
import { type Table, type TableRecord, oracleRows } from "../support/table-oracle.ts";
import { type TestServer, startTestServer } from "../support/server.ts";
import { type LaunchedBrowser, launchChromium } from "./support/browser.ts";

const KEY = "e2e-key-7f3a";
/** The records' columns and key, for the oracle. */
const TABLE: Table = { specs: USER_COLUMN_SPECS, key: USER_KEY };
const RECORDS: UserRecord[] = Array.from({ length: 300 }, (_, i) => ({
  id: i + 1,
  name: `${["Ann", "Bob", "Émile", "Zoë", "Ivan"][i % 5]} ${i}`,
  email: `user${i}@example.com`,
  status: i % 3 === 0 ? "inactive" : "active",
}));

/** The page: runs the requests against the API at `?api=` and leaves what it saw on `window.result`. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>other origin</title><script type="module">
const api = new URL(location.href).searchParams.get("api");
const key = new URL(location.href).searchParams.get("key");
const result = {};
async function attempt(name, run) {
  try { result[name] = await run(); } catch (error) { result[name] = { failed: String(error) }; }
}
await attempt("get", async () => {
  const r = await fetch(api + "/api/users?page=1&pageSize=5&sortBy=name&sortOrder=desc&filter[status]=active", { headers: { Authorization: "Bearer " + key } });
  return { status: r.status, etag: r.headers.get("etag"), snapshotId: r.headers.get("x-snapshot-id"), body: await r.json() };
});
await attempt("post", async () => {
  const r = await fetch(api + "/api/users", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + key },
    body: JSON.stringify({ startRow: 0, endRow: 7, sortModel: [{ colId: "email", sort: "asc" }], filterModel: { name: { filterType: "text", type: "contains", filter: "emile" } } }),
  });
  return { status: r.status, body: await r.json() };
});
await attempt("noKey", async () => {
  const r = await fetch(api + "/api/users");
  return { status: r.status, body: await r.json() };
});
window.result = result;
</script>`;

let api: TestServer;
let allowed: ReturnType<typeof Bun.serve>;
let other: ReturnType<typeof Bun.serve>;
let browser: LaunchedBrowser;

beforeAll(async () => {
  const servePage = () => Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }) });
  allowed = servePage();
  other = servePage();
  api = startTestServer(RECORDS, 1000, { cors: parseCorsOrigins(`http://127.0.0.1:${allowed.port}`), apiKeys: [KEY] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  allowed?.stop(true);
  other?.stop(true);
  await api?.close();
});

/** Opens the page of `server` against the API and returns what it saw. */
async function visit(server: ReturnType<typeof Bun.serve>): Promise<Record<string, any>> {
  await browser.page.goto(`http://127.0.0.1:${server.port}/?api=${encodeURIComponent(api.url)}&key=${KEY}`);
  await browser.page.waitForFunction(() => (window as unknown as { result?: unknown }).result !== undefined, null);
  return browser.page.evaluate(() => (window as unknown as { result: Record<string, unknown> }).result);
}

describe("a page on another origin", () => {
  test("lists users with an API key, reads the exposed headers, and is refused without the key", async () => {
    const seen = await visit(allowed);
    const active = oracleRows(RECORDS as unknown as TableRecord[], TABLE, { sortModel: [{ colId: "name", sort: "desc" }], filterModel: { status: { filterType: "set", values: ["active"] } } });
    expect(seen.get.status).toBe(200);
    expect(seen.get.body.data).toEqual(active.slice(0, 5));
    expect(seen.get.body.total).toBe(active.length);
    expect(seen.get.etag).toMatch(/^"[^"]+"$/);
    expect(seen.get.snapshotId).toBe(api.server.engine().store.snapshotId);
    const emile = oracleRows(RECORDS as unknown as TableRecord[], TABLE, { sortModel: [{ colId: "email", sort: "asc" }], filterModel: { name: { filterType: "text", type: "contains", filter: "emile" } } });
    expect(seen.post).toEqual({ status: 200, body: { data: emile.slice(0, 7), total: emile.length } });
    expect(seen.noKey.status).toBe(401);
    expect(seen.noKey.body.status).toBe(401);
  }, 60_000);

  test("a page on an origin not allowed cannot read the answers", async () => {
    const seen = await visit(other);
    expect(seen.get.failed).toContain("TypeError");
    expect(seen.post.failed).toContain("TypeError");
  }, 60_000);
});
