/**
 * End to end: the demo page with API keys on (docs/api.md "HTTP envelope", API keys) and under
 * another API base path. Without a key the page loads no data and says why; the key typed into
 * the Authorization field is sent as `Authorization: Bearer <key>` on every API request
 * (schema, POST and GET listings, facets, exports), kept for the tab (sessionStorage), and a
 * wrong one is refused. The API base comes from the page's `data-api-base` attribute: served
 * as `/api/people` (the page rewritten, the requests forwarded to the service), every request
 * the page makes goes there. Data shown is checked against the naive oracle.
 *
 * Needs /usr/bin/chromium: `sh scripts/install-chromium.sh` (as root).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page, Request } from "playwright-core";
import { CREDENTIAL_STORAGE_KEY } from "../../src/demo/api.ts";
import { expectAgWindow, expectTanstackPage, openDemoPage } from "./support/demo-page.ts";
import { type DemoSession, UUID_TABLE, openDemoSession, startTableDemoService, uuidUsers } from "./support/fixture.ts";

const TEST_MS = 120_000;
const KEY = "demo-e2e-key-5c1d";

let session: DemoSession;
let page: Page;
/** Every request of the page under /api/: method, path and the Authorization header it carried. */
let apiRequests: { method: string; path: string; authorization: string | null }[] = [];

beforeAll(async () => {
  session = await openDemoSession(startTableDemoService(uuidUsers(1500, 31), UUID_TABLE, { apiKeys: [KEY] }));
  page = session.page;
  page.on("request", (request: Request) => {
    const url = new URL(request.url());
    // the change events' EventSource cannot send headers: its credential is the access_token parameter (docs/api.md "GET /api/users/changes")
    const token = url.pathname.endsWith("/changes") ? url.searchParams.get("access_token") : null;
    if (url.pathname.startsWith("/api/")) apiRequests.push({ method: request.method(), path: url.pathname, authorization: request.headers().authorization ?? (token === null ? null : `Bearer ${token}`) });
  });
}, TEST_MS);

afterAll(async () => {
  await session?.close();
});

/** Waits until both status lines report a failure to load the schema, and returns their text. */
async function refusal(): Promise<{ ag: string | null; ts: string | null }> {
  await page.waitForFunction(() => document.getElementById("ag-status")?.classList.contains("error") && document.getElementById("ts-url")?.classList.contains("error"), null);
  return { ag: await page.textContent("#ag-status"), ts: await page.textContent("#ts-url") };
}

/** Types `value` into the Authorization field and submits it, which reloads the page. */
async function useCredential(value: string): Promise<void> {
  await page.fill("#auth-token", value);
  await Promise.all([page.waitForEvent("load"), page.press("#auth-token", "Enter")]);
}

/** Clicks `selector` and returns the name of the file the click downloads. */
async function download(selector: string): Promise<string> {
  const [file] = await Promise.all([page.waitForEvent("download"), page.click(selector)]);
  return file.suggestedFilename();
}

describe("the demo page with API keys on", () => {
  test(
    "without a key no data loads and the page says so; with the key every request carries it and both clients load; it lasts for the tab; a wrong key is refused",
    async () => {
      const { records, table } = session.service;
      apiRequests = [];
      await page.goto(`${session.service.server.url}/`);
      const refused = await refusal();
      expect(refused.ag).toContain("HTTP 401");
      expect(refused.ts).toContain("HTTP 401");
      expect(refused.ag).toContain("Authorization field");
      expect(await page.evaluate(() => ({ schema: window.demoSchema, grid: window.gridApi === undefined, field: document.getElementById("auth-form")?.classList.contains("refused") }))).toEqual({
        schema: null,
        grid: true,
        field: true,
      });
      expect(await page.$$eval("#ts-tbody tr", (rows) => rows.length)).toBe(0);
      expect(apiRequests).toEqual([{ method: "GET", path: "/api/users/schema", authorization: null }]);

      // the key, pasted with its scheme: the page sends it as Bearer <key>
      apiRequests = [];
      await useCredential(`Bearer ${KEY}`);
      await openDemoPage(page, page.url());
      expect(await page.evaluate((k) => sessionStorage.getItem(k), CREDENTIAL_STORAGE_KEY)).toBe(KEY);
      await expectAgWindow(page, records, table, { sortModel: [], filterModel: {} });
      await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10 });
      // facets (the TanStack selects, AG Grid's set filter) and both exports, with the key too
      await page.evaluate(() => window.gridApi.ensureColumnVisible("status"));
      await page.locator('.ag-header-cell[col-id="status"] .ag-header-cell-filter-button').click();
      await page.waitForSelector('.facet-filter[data-column="status"] .facet-value');
      await page.keyboard.press("Escape");
      expect(await download("#ag-export")).toMatch(/^users-[0-9a-f]{16}\.csv$/);
      expect(await download("#ts-export")).toMatch(/^users-[0-9a-f]{16}\.csv$/);
      const kinds = new Set(apiRequests.map((r) => `${r.method} ${r.path}`));
      expect([...kinds].sort()).toEqual(["GET /api/users", "GET /api/users/changes", "GET /api/users/export", "GET /api/users/facets", "GET /api/users/schema", "POST /api/users", "POST /api/users/export", "POST /api/users/facets"]);
      expect(apiRequests.filter((r) => r.authorization !== `Bearer ${KEY}`)).toEqual([]);

      // a reload keeps the key (sessionStorage); a new tab starts without it
      await page.reload();
      await openDemoPage(page, page.url());
      await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10 });
      const tab = await session.browser.context.newPage();
      try {
        await tab.goto(`${session.service.server.url}/`);
        await tab.waitForFunction(() => document.getElementById("ag-status")?.classList.contains("error"), null);
        expect(await tab.textContent("#ag-status")).toContain("HTTP 401");
      } finally {
        await tab.close();
      }

      // a wrong key: refused, with the server's reason
      await useCredential("not-the-key");
      const wrong = await refusal();
      expect(wrong.ag).toContain("HTTP 401: the API key is not valid");
      // cleared: no key sent at all
      apiRequests = [];
      await useCredential("");
      await refusal();
      expect(await page.evaluate((k) => sessionStorage.getItem(k), CREDENTIAL_STORAGE_KEY)).toBeNull();
      expect(apiRequests).toEqual([{ method: "GET", path: "/api/users/schema", authorization: null }]);
      // the only errors the page logged are the refused requests themselves
      expect(session.pageErrors.filter((e) => !e.includes("status of 401"))).toEqual([]);
      session.pageErrors.length = 0;
    },
    TEST_MS,
  );
});

describe("the demo page under another API base path", () => {
  test(
    "with data-api-base=/api/people every request of the page goes there (and carries the key); both clients load",
    async () => {
      const { records, table, server } = session.service;
      // the page as a server would serve it under `--resource people`, and that resource forwarded to this service's /api/users
      await page.route(`${server.url}/`, async (route) => {
        const response = await route.fetch();
        const html = (await response.text()).replace('data-api-base="/api/users"', 'data-api-base="/api/people"');
        expect(html).toContain('data-api-base="/api/people"');
        const headers = { ...response.headers() };
        delete headers["content-encoding"];
        delete headers["content-length"];
        await route.fulfill({ status: response.status(), headers, body: html });
      });
      await page.route(`${server.url}/api/people**`, async (route) => {
        const url = new URL(route.request().url());
        url.pathname = url.pathname.replace(/^\/api\/people/, "/api/users");
        // the event stream never ends: passed on as it comes, not fetched whole
        if (url.pathname.endsWith("/changes")) await route.continue({ url: url.toString() });
        else await route.fulfill({ response: await route.fetch({ url: url.toString() }) });
      });
      try {
        await page.evaluate(([k, v]) => sessionStorage.setItem(k, v), [CREDENTIAL_STORAGE_KEY, KEY] as const);
        apiRequests = [];
        await openDemoPage(page, `${server.url}/`);
        expect(await page.$$eval(".api-base", (els) => els.map((e) => e.textContent))).toEqual(["/api/people", "/api/people"]);
        await page.evaluate(() => window.gridApi.ensureColumnVisible("signed_up"));
        await page.locator('.ag-header-cell[col-id="signed_up"] .ag-header-cell-label').click();
        await expectAgWindow(page, records, table, { sortModel: [{ colId: "signed_up", sort: "asc" }], filterModel: {} });
        await page.selectOption('#ts-thead select[data-filter="status"]', "deleted");
        await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10, filters: { status: "deleted" } });
        expect(await download("#ts-export")).toMatch(/^users-[0-9a-f]{16}\.csv$/);
        expect(apiRequests.length).toBeGreaterThan(3);
        expect(apiRequests.filter((r) => !r.path.startsWith("/api/people") || r.authorization !== `Bearer ${KEY}`)).toEqual([]);
        expect(session.pageErrors).toEqual([]);
      } finally {
        await page.unrouteAll();
      }
    },
    TEST_MS,
  );
});
