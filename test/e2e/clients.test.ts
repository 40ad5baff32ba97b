/**
 * End to end: the demo page's two real clients (AG Grid Infinite Row Model over POST, TanStack
 * Table over GET) in Debian's Chromium against the service started in-process over 100,000
 * generated users (the default data's four columns). Every answer the page shows is checked
 * against the naive oracle of any table (test/support/table-oracle.ts) on the same records,
 * given the request each client sent (docs/api.md "Ordering", "Matching", "GET /api/users",
 * "POST /api/users").
 *
 * Needs /usr/bin/chromium: `sh scripts/install-chromium.sh` (as root). Run: `bun test test/e2e`.
 * Screenshots go to test-artifacts/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { STATUS_VALUES } from "../../src/generate/record.ts";
import { fold } from "../../src/collation/collation.ts";
import { type OracleBody, oracleRows } from "../support/table-oracle.ts";
import { type LaunchedBrowser, launchChromium, saveScreenshot } from "./support/browser.ts";
import { BLOCK, type TsView, agFloatingInput, agHeaderTexts, agHeader, agRequestCount, expectAgWindow, expectTanstackPage, openDemoPage, tsFilter, tsHeader } from "./support/demo-page.ts";
import { type DemoService, startDemoService } from "./support/fixture.ts";

/** Rows in the snapshot and the generator seed (the oracle's records use the same). */
const COUNT = 100_000;
const SEED = 7;
/** Per-test limit, in ms: generous, the machine has 2 cores and Chromium shares them. */
const TEST_MS = 120_000;

let service: DemoService;
let browser: LaunchedBrowser;
let page: Page;
/** Every /api/users request Chromium sent: `METHOD url` (query strings exactly as on the wire). */
const sentRequests: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  service = await startDemoService(COUNT, SEED);
  browser = await launchChromium();
  page = browser.page;
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === "/api/users") sentRequests.push(`${request.method()} ${request.url()}`);
  });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") pageErrors.push(`console.${message.type()}: ${message.text()}`);
  });
}, TEST_MS);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

/** Loads the demo page afresh (with `search` as its query string) and waits until both clients show their first rows. */
const openDemo = (search = "") => openDemoPage(page, `${service.server.url}/${search}`);

/** The oracle body of a sort and filter model (no search). */
type Sort = OracleBody["sortModel"];
const body = (sortModel: Sort = [], filterModel: OracleBody["filterModel"] = {}): OracleBody => ({ sortModel, filterModel });
const asc = (colId: string) => ({ colId, sort: "asc" as const });
const desc = (colId: string) => ({ colId, sort: "desc" as const });

/** {@link expectAgWindow} over this file's service. */
const agWindow = (request: OracleBody, start = 0, limit = BLOCK) => expectAgWindow(page, service.records, service.table, request, start, limit);

/** {@link expectTanstackPage} over this file's service. */
const tsPage = (view: TsView) => expectTanstackPage(page, service.records, service.table, view);

/** The ids of the rows AG Grid has rendered in the DOM, by row index. */
async function agRenderedIds(): Promise<Map<number, number>> {
  const pairs = await page.$$eval("#ag-grid .ag-row[row-index]", (rows) =>
    rows.map((row) => [Number(row.getAttribute("row-index")), Number(row.querySelector('[col-id="id"]')?.textContent ?? "NaN")] as const),
  );
  return new Map(pairs.filter(([, id]) => !Number.isNaN(id)));
}

async function agRequestsSince(n: number) {
  return page.evaluate((from) => window.agRequests.slice(from).map((r) => ({ ...r.body, status: r.status, total: r.total })), n);
}

// ---------------------------------------------------------------------------------------------

describe("AG Grid (Infinite Row Model, POST /api/users)", () => {
  test(
    "every column of the schema, the first block, then a deep block around row 50,000, match the oracle",
    async () => {
      await openDemo();
      const ids = service.table.specs.map((c) => c.id);
      expect(await agHeaderTexts(page, ids)).toEqual(ids);
      expect(await agWindow(body(), 0)).toBe(COUNT);

      const before = await agRequestCount(page);
      await page.evaluate(() => window.gridApi.ensureIndexVisible(50_000, "top"));
      await agWindow(body(), 50_000);
      // The rows the grid rendered (the DOM, not only its cache) are the oracle's rows at their indexes.
      await page.waitForFunction(() => (document.querySelector('#ag-grid .ag-row[row-index="50000"] [col-id="id"]')?.textContent ?? "") !== "", null);
      const rendered = await agRenderedIds();
      const expectedAt = oracleRows(service.records, service.table, body()).slice(49_900, 50_100);
      for (const [index, id] of rendered) expect({ index, id }).toEqual({ index, id: expectedAt[index - 49_900].id as number });
      expect(rendered.size).toBeGreaterThan(5);
      const scrollRequests = await agRequestsSince(before);
      console.log(`AG Grid: ensureIndexVisible(50000) sent ${scrollRequests.length} requests:`, JSON.stringify(scrollRequests));
      expect(scrollRequests.every((r) => r.endRow - r.startRow === BLOCK && r.startRow % BLOCK === 0)).toBe(true);
      await agWindow(body(), 49_900, 2 * BLOCK);
      await saveScreenshot(page, "ag-grid-row-50000", "#ag-panel");
    },
    TEST_MS,
  );

  test(
    "header clicks sort, shift-click adds keys, and deep blocks follow the multi-key order",
    async () => {
      await openDemo();
      const before = await agRequestCount(page);
      await agHeader(page, "name").click();
      await agWindow(body([asc("name")]), 0);
      await agHeader(page, "name").click();
      await agWindow(body([desc("name")]), 0);
      // A plain click on another header replaces the sort; shift-click appends a key.
      await agHeader(page, "status").click();
      await agWindow(body([asc("status")]), 0);
      await agHeader(page, "email").click({ modifiers: ["Shift"] });
      await agWindow(body([asc("status"), asc("email")]), 0);
      await agHeader(page, "email").click({ modifiers: ["Shift"] });
      await agWindow(body([asc("status"), desc("email")]), 0);
      await page.evaluate(() => window.gridApi.ensureIndexVisible(70_000, "top"));
      await agWindow(body([asc("status"), desc("email")]), 70_000);

      const sent = await agRequestsSince(before);
      const last = sent.findLast((r) => r.startRow === 0);
      console.log("AG Grid sortModel after status, shift+email, shift+email:", JSON.stringify(last?.sortModel));
      expect(last?.sortModel).toEqual([
        { sort: "asc", type: "default", colId: "status" },
        { sort: "desc", type: "default", colId: "email" },
      ]);
      expect(sent.every((r) => r.status === 200)).toBe(true);
    },
    TEST_MS,
  );

  test(
    "floating filters: text contains on name, number equals on id; the status set filter fed by the facets endpoint",
    async () => {
      await openDemo();
      const before = await agRequestCount(page);
      await agFloatingInput(page, "name").fill("mar");
      const mar = { name: { filterType: "text", type: "contains", filter: "mar" } };
      expect(await agWindow(body([], mar), 0)).toBeGreaterThan(BLOCK);

      // status takes the set filter fed by POST /api/users/facets: its counts leave out its own filter
      await page.locator('.ag-header-cell[col-id="status"] .ag-header-cell-filter-button').click();
      await page.waitForSelector('.facet-filter[data-column="status"] .facet-value');
      const marRows = service.records.filter((r) => fold(r.name as string).includes("mar"));
      const listed = await page.$$eval('.facet-filter[data-column="status"] .facet-value', (labels) =>
        labels.map((l) => [l.querySelector("span")?.textContent, Number(l.querySelector(".facet-count")?.textContent?.replace(/,/g, ""))]),
      );
      expect(Object.fromEntries(listed)).toEqual(Object.fromEntries(STATUS_VALUES.map((s) => [s, marRows.filter((r) => r.status === s).length])));
      await page.locator(`.facet-filter[data-column="status"] input[value='"inactive"']`).check();
      await agWindow(body([], { ...mar, status: { filterType: "set", values: ["inactive"] } }), 0);
      await page.locator('.facet-filter[data-column="status"] button').click();
      await page.keyboard.press("Escape");

      await agFloatingInput(page, "name").fill("");
      await agFloatingInput(page, "id").fill("4242");
      expect(await agWindow(body([], { id: { filterType: "number", type: "equals", filter: 4242 } }), 0)).toBe(1);

      const models = (await agRequestsSince(before)).map((r) => r.filterModel);
      console.log("AG Grid filterModels from floating filters:", JSON.stringify(models));
      expect(models).toContainEqual(mar);
      expect(models.at(-1)).toEqual({ id: { filterType: "number", type: "equals", filter: 4242 } });
    },
    TEST_MS,
  );

  test(
    "api.setFilterModel: number inRange, OR-combined text conditions, notBlank",
    async () => {
      await openDemo();
      // inRange is exclusive at both ends (AG Grid's default; docs/api.md "number").
      const inRange = { id: { filterType: "number", type: "inRange", filter: 1000, filterTo: 2000 } };
      await page.evaluate((m) => window.gridApi.setFilterModel(m), inRange);
      expect(await agWindow(body([], inRange), 0)).toBe(999);
      await page.evaluate(() => window.gridApi.ensureIndexVisible(998, "bottom"));
      await agWindow(body([], inRange), 900, 99);

      const anOrSon = {
        name: {
          filterType: "text",
          operator: "OR",
          conditions: [
            { filterType: "text", type: "startsWith", filter: "an" },
            { filterType: "text", type: "endsWith", filter: "son" },
          ],
        },
      };
      await page.evaluate((m) => window.gridApi.setFilterModel(m), anOrSon);
      await agWindow(body([], anOrSon), 0);
      await agHeader(page, "email").click();
      await agHeader(page, "email").click();
      expect(await agWindow(body([desc("email")], anOrSon), 0)).toBeGreaterThan(BLOCK);

      const inactiveModel = { email: { filterType: "text", type: "notBlank" }, status: { filterType: "text", type: "equals", filter: "inactive" } };
      await page.evaluate((m) => window.gridApi.setFilterModel(m), inactiveModel);
      const inactive = await agWindow(body([desc("email")], inactiveModel), 0);
      expect(inactive).toBe(service.records.filter((r) => r.status === "inactive").length);
      await saveScreenshot(page, "ag-grid-filtered", "#ag-panel");
    },
    TEST_MS,
  );
});

describe("TanStack Table (manual pagination/sorting/filtering, GET /api/users)", () => {
  test(
    "every column of the schema; pages forward, to the last page, changes the page size and goes back to the first",
    async () => {
      await openDemo();
      const headers = await page.$$eval("#ts-thead th[data-column]", (ths) => ths.map((th) => (th as HTMLElement).dataset.column));
      expect(headers).toEqual(service.table.specs.map((c) => c.id));
      expect(await tsPage({ pageIndex: 0, pageSize: 10 })).toEqual({ total: COUNT, pageCount: COUNT / 10 });
      await page.click("#ts-next");
      await page.click("#ts-next");
      await tsPage({ pageIndex: 2, pageSize: 10 });
      await page.click("#ts-last");
      await tsPage({ pageIndex: 9_999, pageSize: 10 });
      expect(await page.isDisabled("#ts-next")).toBe(true);
      // TanStack keeps the top row in view: row 99,990 is on page floor(99990 / 50) = 1999 (0-based).
      await page.selectOption("#ts-page-size", "50");
      await tsPage({ pageIndex: 1_999, pageSize: 50 });
      await page.click("#ts-prev");
      await tsPage({ pageIndex: 1_998, pageSize: 50 });
      await page.click("#ts-first");
      expect(await tsPage({ pageIndex: 0, pageSize: 50 })).toEqual({ total: COUNT, pageCount: 2_000 });
      await page.selectOption("#ts-page-size", "100");
      await tsPage({ pageIndex: 0, pageSize: 100 });
    },
    TEST_MS,
  );

  test(
    "header clicks sort both ways and off; a number column starts descending",
    async () => {
      await openDemo();
      await tsHeader(page, "name").click();
      await tsPage({ pageIndex: 0, pageSize: 10, sort: { id: "name", desc: false } });
      await page.click("#ts-next");
      await tsPage({ pageIndex: 1, pageSize: 10, sort: { id: "name", desc: false } });
      // A sort change goes back to page 1.
      await tsHeader(page, "name").click();
      await tsPage({ pageIndex: 0, pageSize: 10, sort: { id: "name", desc: true } });
      await page.click("#ts-last");
      await tsPage({ pageIndex: 9_999, pageSize: 10, sort: { id: "name", desc: true } });
      await tsHeader(page, "name").click();
      await tsPage({ pageIndex: 0, pageSize: 10 });
      // TanStack's first direction for a column whose values are numbers is descending.
      await tsHeader(page, "id").click();
      await tsPage({ pageIndex: 0, pageSize: 10, sort: { id: "id", desc: true } });
      await tsHeader(page, "email").click();
      await tsPage({ pageIndex: 0, pageSize: 10, sort: { id: "email", desc: false } });
      await tsHeader(page, "email").click();
      await tsPage({ pageIndex: 0, pageSize: 10, sort: { id: "email", desc: true } });
      await tsHeader(page, "status").click();
      await tsPage({ pageIndex: 0, pageSize: 10, sort: { id: "status", desc: false } });
    },
    TEST_MS,
  );

  test(
    "the filters under the headers: name contains, a status select fed by facets, an id range",
    async () => {
      await openDemo();
      await page.selectOption("#ts-page-size", "20");
      await tsFilter(page, "name").fill("anna");
      const byName = await tsPage({ pageIndex: 0, pageSize: 20, filters: { name: "anna" } });
      expect(byName.pageCount).toBeGreaterThan(2);
      await page.click("#ts-last");
      await tsPage({ pageIndex: byName.pageCount - 1, pageSize: 20, filters: { name: "anna" } });
      // A filter change goes back to page 1; the status select lists the server's counts under the name filter.
      const annaRows = service.records.filter((r) => fold(r.name as string).includes("anna"));
      await page.waitForFunction(
        (n) => document.querySelector('#ts-thead select[data-filter="status"] option[value="inactive"]')?.getAttribute("data-count") === String(n),
        annaRows.filter((r) => r.status === "inactive").length,
      );
      await tsFilter(page, "status").selectOption("inactive");
      const nameAndStatus = { name: "anna", status: "inactive" };
      await tsPage({ pageIndex: 0, pageSize: 20, filters: nameAndStatus });
      await tsHeader(page, "name").click();
      await tsPage({ pageIndex: 0, pageSize: 20, sort: { id: "name", desc: false }, filters: nameAndStatus });
      await saveScreenshot(page, "tanstack-filtered-sorted", "#ts-panel");
      await tsHeader(page, "name").click();
      await tsFilter(page, "name").fill("");
      await tsPage({ pageIndex: 0, pageSize: 20, sort: { id: "name", desc: true }, filters: { status: "inactive" } });
      await tsHeader(page, "name").click();
      await tsFilter(page, "id").fill("10,50");
      const range = await tsPage({ pageIndex: 0, pageSize: 20, filters: { status: "inactive", id: "10,50" } });
      expect(range.total).toBeGreaterThan(0);
      await tsFilter(page, "status").selectOption("");
      expect(await tsPage({ pageIndex: 0, pageSize: 20, filters: { id: "10,50" } })).toEqual({ total: 41, pageCount: 3 });
      await page.click("#ts-next");
      await page.click("#ts-next");
      await tsPage({ pageIndex: 2, pageSize: 20, filters: { id: "10,50" } });
      await tsFilter(page, "id").fill("4242");
      expect(await tsPage({ pageIndex: 0, pageSize: 20, filters: { id: "4242" } })).toEqual({ total: 1, pageCount: 1 });
      await saveScreenshot(page, "tanstack-id-filter", "#ts-panel");
    },
    TEST_MS,
  );

  test(
    "sends brackets raw (filter[name]) and percent-encoded (filter%5Bname%5D), with the same answers",
    async () => {
      await openDemo("?tsUrl=raw");
      const before = sentRequests.length;
      await tsFilter(page, "name").fill("a k");
      const raw = await tsPage({ pageIndex: 0, pageSize: 10, filters: { name: "a k" } });
      await tsFilter(page, "id").fill("10,5000");
      const both = { name: "a k", id: "10,5000" };
      await tsPage({ pageIndex: 0, pageSize: 10, filters: both });

      await page.selectOption("#ts-url-mode", "encoded");
      await tsPage({ pageIndex: 0, pageSize: 10, filters: both });
      await tsFilter(page, "id").fill("");
      expect(await tsPage({ pageIndex: 0, pageSize: 10, filters: { name: "a k" } })).toEqual(raw);

      const urls = sentRequests.slice(before).filter((r) => r.startsWith("GET "));
      console.log("TanStack request URLs:", urls);
      expect(urls.some((u) => u.includes("filter[name]=a%20k") && u.includes("filter[id]=10,5000"))).toBe(true);
      expect(urls.some((u) => u.includes("filter%5Bname%5D=a+k") && u.includes("filter%5Bid%5D=10%2C5000"))).toBe(true);
      expect(urls.some((u) => u.endsWith("filter%5Bname%5D=a+k"))).toBe(true);
      await saveScreenshot(page, "demo-page");
      expect(pageErrors).toEqual([]);
    },
    TEST_MS,
  );
});
