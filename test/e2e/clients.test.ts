/**
 * End to end: the demo page's two real clients (AG Grid Infinite Row Model over POST, TanStack
 * Table over GET) in Debian's Chromium against the service started in-process over 100,000
 * generated users. Every answer the page shows is checked against the naive oracle
 * (test/support/oracle.ts) on the same records, with the Query built by hand per scenario
 * (docs/api.md "Ordering", "Matching", "GET /api/users", "POST /api/users").
 *
 * Needs /usr/bin/chromium: `sh scripts/install-chromium.sh` (as root). Run: `bun test test/e2e`.
 * Screenshots go to test-artifacts/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import type { Predicate, Query, SortKey } from "../../src/query/types.ts";
import { type ColumnId, STATUS_VALUES, type Status, type UserRecord } from "../../src/generate/record.ts";
import { fold } from "../../src/collation/collation.ts";
import { naiveQuery } from "../support/oracle.ts";
import { type LaunchedBrowser, launchChromium, saveScreenshot } from "./support/browser.ts";
import { type DemoService, startDemoService } from "./support/fixture.ts";

/** Rows in the snapshot and the generator seed (the oracle's records use the same). */
const COUNT = 100_000;
const SEED = 7;
/** Per-test limit, in ms: generous, the machine has 2 cores and Chromium shares them. */
const TEST_MS = 120_000;
/** How long a wait for the page to show an expected state may take, in ms. */
const WAIT_MS = 30_000;
/** AG Grid's block size (src/demo/ag-grid.ts `cacheBlockSize`). */
const BLOCK = 100;

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

// ---------------------------------------------------------------------------------------------
// Oracle helpers: Query objects by hand (src/query/types.ts).

const asc = (column: ColumnId): SortKey => ({ column, direction: "asc", absolute: false });
const desc = (column: ColumnId): SortKey => ({ column, direction: "desc", absolute: false });
const text = (column: ColumnId, op: "contains" | "startsWith" | "endsWith" | "equals" | "notBlank", value: string): Predicate => ({
  kind: "text",
  column,
  op,
  value,
});
const and = (...children: Predicate[]): Predicate => ({ kind: "and", children });
const or = (...children: Predicate[]): Predicate => ({ kind: "or", children });
const statusIs = (status: Status): Predicate => ({ kind: "status", codes: [STATUS_VALUES.indexOf(status)] });
/** GET's `filter[id]=min,max`: an inclusive range (docs/api.md "GET /api/users"). */
const idBetween = (min: number, max: number): Predicate =>
  and({ kind: "number", column: "id", op: "greaterThanOrEqual", value: min }, { kind: "number", column: "id", op: "lessThanOrEqual", value: max });

/** The oracle's answer for a window, as plain rows. */
function oracle(filter: Predicate | null, sort: SortKey[], offset: number, limit: number): { rows: UserRecord[]; total: number } {
  const query: Query = { filter, sort, offset, limit };
  const answer = naiveQuery(service.records, query);
  return { rows: answer.rows.map(({ id, name, email, status }) => ({ id, name, email, status })), total: answer.total };
}

/** Polls `read` until `done(value)` or the wait limit; returns the last value read. */
async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = WAIT_MS): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await Bun.sleep(100);
    value = await read();
  }
  return value;
}

/** Loads the demo page afresh and waits until both clients show their first rows. */
async function openDemo(search = ""): Promise<void> {
  await page.goto(`${service.server.url}/${search}`);
  await page.waitForFunction(
    () => window.gridApi?.getDisplayedRowAtIndex(0)?.data !== undefined && window.tanstackDemo?.snapshot().settled === true,
    null,
    { timeout: WAIT_MS },
  );
}

// ---------------------------------------------------------------------------------------------
// AG Grid helpers.

/** What AG Grid shows: its row count and the data of rows [start, start + count) (null: not loaded). */
interface AgView {
  rowCount: number;
  rows: (UserRecord | null)[];
}

async function agView(start: number, count: number): Promise<AgView> {
  return page.evaluate(
    ([from, n]) => {
      const api = window.gridApi;
      const rows = [];
      for (let i = from; i < from + n; i++) {
        const data = api.getDisplayedRowAtIndex(i)?.data;
        rows.push(data === undefined ? null : { id: data.id, name: data.name, email: data.email, status: data.status });
      }
      return { rowCount: api.getDisplayedRowCount(), rows };
    },
    [start, count] as const,
  );
}

/**
 * Waits until AG Grid's row count is the oracle's total and rows [start, start + limit) are the
 * oracle's rows at those positions, then asserts it (so a failure shows the difference).
 * `limit` stays inside one or two blocks the grid loaded already: reading a row of an unloaded
 * block would make the grid fetch it.
 * @returns the oracle's total.
 */
async function expectAgWindow(filter: Predicate | null, sort: SortKey[], start: number, limit = BLOCK): Promise<number> {
  const expected = oracle(filter, sort, start, limit);
  const want: AgView = { rowCount: expected.total, rows: expected.rows };
  const got = await poll(
    () => agView(start, expected.rows.length),
    (view) => Bun.deepEquals(view, want),
  );
  expect(got).toEqual(want);
  return expected.total;
}

/** The ids of the rows AG Grid has rendered in the DOM, by row index. */
async function agRenderedIds(): Promise<Map<number, number>> {
  const pairs = await page.$$eval("#ag-grid .ag-row[row-index]", (rows) =>
    rows.map((row) => [Number(row.getAttribute("row-index")), Number(row.querySelector('[col-id="id"]')?.textContent ?? "NaN")] as const),
  );
  return new Map(pairs.filter(([, id]) => !Number.isNaN(id)));
}

async function agRequestCount(): Promise<number> {
  return page.evaluate(() => window.agRequests.length);
}

async function agRequestsSince(n: number) {
  return page.evaluate((from) => window.agRequests.slice(from).map((r) => ({ ...r.body, status: r.status, total: r.total })), n);
}

const headerLabel = (column: string) => page.locator(`.ag-header-cell[col-id="${column}"] .ag-header-cell-label`);
const floatingInput = (column: string) => page.locator(`.ag-floating-filter[col-id="${column}"] input:not([disabled])`);

// ---------------------------------------------------------------------------------------------
// TanStack helpers.

interface TsState {
  pagination: { pageIndex: number; pageSize: number };
  sorting: { id: string; desc: boolean }[];
  columnFilters: { id: string; value: unknown }[];
}

/** Waits until the TanStack client is settled in `state`, then returns its snapshot. */
async function tanstackSettled(state: TsState) {
  const snap = await poll(
    () => page.evaluate(() => window.tanstackDemo.snapshot()),
    (s) => s.settled && Bun.deepEquals({ pagination: s.pagination, sorting: s.sorting, columnFilters: s.columnFilters }, state),
  );
  expect({ settled: snap.settled, error: snap.error, pagination: snap.pagination, sorting: snap.sorting, columnFilters: snap.columnFilters }).toEqual({
    settled: true,
    error: null,
    ...state,
  });
  return snap;
}

/**
 * Asserts that the TanStack client, settled in `state`, shows the oracle's page: rows, total,
 * page count, and the same in the DOM ("Page X of Y", "N total", the id column).
 */
async function expectTanstackPage(state: TsState, filter: Predicate | null, sort: SortKey[]): Promise<{ total: number; pageCount: number }> {
  const snap = await tanstackSettled(state);
  const { pageIndex, pageSize } = state.pagination;
  const expected = oracle(filter, sort, pageIndex * pageSize, pageSize);
  const pageCount = Math.ceil(expected.total / pageSize);
  expect({ total: snap.total, pageCount: snap.pageCount, rows: snap.rows as unknown[] }).toEqual({ total: expected.total, pageCount, rows: expected.rows });
  const dom = await page.evaluate(() => ({
    pageInfo: document.getElementById("ts-page-info")?.textContent,
    total: document.getElementById("ts-total")?.textContent,
    ids: Array.from(document.querySelectorAll("#ts-tbody tr")).map((tr) => Number(tr.firstElementChild?.textContent)),
  }));
  expect(dom).toEqual({
    pageInfo: `Page ${pageCount === 0 ? 0 : pageIndex + 1} of ${pageCount}`,
    total: `${expected.total.toLocaleString("en")} total`,
    ids: expected.rows.map((row) => row.id),
  });
  return { total: expected.total, pageCount };
}

const tsHeader = (column: string) => page.locator(`#ts-thead th[data-column="${column}"]`);
const page1 = (pageSize = 10) => ({ pageIndex: 0, pageSize });

// ---------------------------------------------------------------------------------------------

describe("AG Grid (Infinite Row Model, POST /api/users)", () => {
  test(
    "the first block, then a deep block around row 50,000, match the oracle",
    async () => {
      await openDemo();
      expect(await expectAgWindow(null, [], 0)).toBe(COUNT);

      const before = await agRequestCount();
      await page.evaluate(() => window.gridApi.ensureIndexVisible(50_000, "top"));
      await expectAgWindow(null, [], 50_000);
      // The rows the grid rendered (the DOM, not only its cache) are the oracle's rows at their indexes.
      const rendered = await poll(agRenderedIds, (ids) => ids.has(50_000));
      const expectedAt = oracle(null, [], 49_900, 200).rows;
      for (const [index, id] of rendered) expect({ index, id }).toEqual({ index, id: expectedAt[index - 49_900].id });
      expect(rendered.size).toBeGreaterThan(5);
      await Bun.sleep(500);
      const scrollRequests = await agRequestsSince(before);
      console.log(`AG Grid: ensureIndexVisible(50000) sent ${scrollRequests.length} requests:`, JSON.stringify(scrollRequests));
      expect(scrollRequests.every((r) => r.endRow - r.startRow === BLOCK && r.startRow % BLOCK === 0)).toBe(true);
      await expectAgWindow(null, [], 49_900, 2 * BLOCK);
      await saveScreenshot(page, "ag-grid-row-50000", "#ag-panel");
    },
    TEST_MS,
  );

  test(
    "header clicks sort, shift-click adds keys, and deep blocks follow the multi-key order",
    async () => {
      await openDemo();
      const before = await agRequestCount();
      await headerLabel("name").click();
      await expectAgWindow(null, [asc("name")], 0);
      await headerLabel("name").click();
      await expectAgWindow(null, [desc("name")], 0);
      // A plain click on another header replaces the sort; shift-click appends a key.
      await headerLabel("status").click();
      await expectAgWindow(null, [asc("status")], 0);
      await headerLabel("email").click({ modifiers: ["Shift"] });
      await expectAgWindow(null, [asc("status"), asc("email")], 0);
      await headerLabel("email").click({ modifiers: ["Shift"] });
      await expectAgWindow(null, [asc("status"), desc("email")], 0);
      await page.evaluate(() => window.gridApi.ensureIndexVisible(70_000, "top"));
      await expectAgWindow(null, [asc("status"), desc("email")], 70_000);

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
      const before = await agRequestCount();
      await floatingInput("name").fill("mar");
      const marTotal = await expectAgWindow(text("name", "contains", "mar"), [], 0);
      expect(marTotal).toBeGreaterThan(BLOCK);

      // status takes the set filter fed by POST /api/users/facets: its counts leave out its own filter
      await page.locator('.ag-header-cell[col-id="status"] .ag-header-cell-filter-button').click();
      await page.waitForSelector('.facet-filter[data-column="status"] .facet-value');
      const marRows = service.records.filter((r) => fold(r.name).includes("mar"));
      const listed = await page.$$eval('.facet-filter[data-column="status"] .facet-value', (labels) => labels.map((l) => [l.querySelector("span")?.textContent, Number(l.querySelector(".facet-count")?.textContent?.replace(/,/g, ""))]));
      expect(Object.fromEntries(listed)).toEqual(Object.fromEntries(STATUS_VALUES.map((s) => [s, marRows.filter((r) => r.status === s).length])));
      await page.locator(`.facet-filter[data-column="status"] input[value='"inactive"']`).check();
      await expectAgWindow(and(text("name", "contains", "mar"), { kind: "status", codes: [1] }), [], 0);
      await page.locator('.facet-filter[data-column="status"] button').click();
      await page.keyboard.press("Escape");

      await floatingInput("name").fill("");
      await floatingInput("id").fill("4242");
      expect(await expectAgWindow({ kind: "number", column: "id", op: "equals", value: 4242 }, [], 0)).toBe(1);

      const models = (await agRequestsSince(before)).map((r) => r.filterModel);
      console.log("AG Grid filterModels from floating filters:", JSON.stringify(models));
      expect(models).toContainEqual({ name: { filterType: "text", type: "contains", filter: "mar" } });
      expect(models.at(-1)).toEqual({ id: { filterType: "number", type: "equals", filter: 4242 } });
    },
    TEST_MS,
  );

  test(
    "api.setFilterModel: number inRange, OR-combined text conditions, notBlank",
    async () => {
      await openDemo();
      // inRange is exclusive at both ends (AG Grid's default; docs/api.md "number").
      await page.evaluate(() => window.gridApi.setFilterModel({ id: { filterType: "number", type: "inRange", filter: 1000, filterTo: 2000 } }));
      const inRange: Predicate = { kind: "number", column: "id", op: "inRange", value: 1000, valueTo: 2000 };
      expect(await expectAgWindow(inRange, [], 0)).toBe(999);
      await page.evaluate(() => window.gridApi.ensureIndexVisible(998, "bottom"));
      await expectAgWindow(inRange, [], 900, 99);

      await page.evaluate(() =>
        window.gridApi.setFilterModel({
          name: {
            filterType: "text",
            operator: "OR",
            conditions: [
              { filterType: "text", type: "startsWith", filter: "an" },
              { filterType: "text", type: "endsWith", filter: "son" },
            ],
          },
        }),
      );
      const anOrSon = or(text("name", "startsWith", "an"), text("name", "endsWith", "son"));
      await expectAgWindow(anOrSon, [], 0);
      await headerLabel("email").click();
      await headerLabel("email").click();
      const anOrSonTotal = await expectAgWindow(anOrSon, [desc("email")], 0);
      expect(anOrSonTotal).toBeGreaterThan(BLOCK);

      await page.evaluate(() =>
        window.gridApi.setFilterModel({
          email: { filterType: "text", type: "notBlank" },
          status: { filterType: "text", type: "equals", filter: "inactive" },
        }),
      );
      const inactive = await expectAgWindow(and(text("email", "notBlank", ""), text("status", "equals", "inactive")), [desc("email")], 0);
      expect(inactive).toBe(service.records.filter((r) => r.status === "inactive").length);
      await saveScreenshot(page, "ag-grid-filtered", "#ag-panel");
    },
    TEST_MS,
  );
});

describe("TanStack Table (manual pagination/sorting/filtering, GET /api/users)", () => {
  test(
    "pages forward, to the last page, changes the page size and goes back to the first",
    async () => {
      await openDemo();
      const first = await expectTanstackPage({ pagination: page1(), sorting: [], columnFilters: [] }, null, []);
      expect(first).toEqual({ total: COUNT, pageCount: COUNT / 10 });
      await page.click("#ts-next");
      await page.click("#ts-next");
      await expectTanstackPage({ pagination: { pageIndex: 2, pageSize: 10 }, sorting: [], columnFilters: [] }, null, []);
      await page.click("#ts-last");
      await expectTanstackPage({ pagination: { pageIndex: 9_999, pageSize: 10 }, sorting: [], columnFilters: [] }, null, []);
      expect(await page.isDisabled("#ts-next")).toBe(true);
      // TanStack keeps the top row in view: row 99,990 is on page floor(99990 / 50) = 1999 (0-based).
      await page.selectOption("#ts-page-size", "50");
      await expectTanstackPage({ pagination: { pageIndex: 1_999, pageSize: 50 }, sorting: [], columnFilters: [] }, null, []);
      await page.click("#ts-prev");
      await expectTanstackPage({ pagination: { pageIndex: 1_998, pageSize: 50 }, sorting: [], columnFilters: [] }, null, []);
      await page.click("#ts-first");
      expect(await expectTanstackPage({ pagination: page1(50), sorting: [], columnFilters: [] }, null, [])).toEqual({ total: COUNT, pageCount: 2_000 });
      await page.selectOption("#ts-page-size", "100");
      await expectTanstackPage({ pagination: page1(100), sorting: [], columnFilters: [] }, null, []);
    },
    TEST_MS,
  );

  test(
    "header clicks sort both ways and off; a number column starts descending",
    async () => {
      await openDemo();
      await tsHeader("name").click();
      await expectTanstackPage({ pagination: page1(), sorting: [{ id: "name", desc: false }], columnFilters: [] }, null, [asc("name")]);
      await page.click("#ts-next");
      await expectTanstackPage({ pagination: { pageIndex: 1, pageSize: 10 }, sorting: [{ id: "name", desc: false }], columnFilters: [] }, null, [asc("name")]);
      // A sort change goes back to page 1.
      await tsHeader("name").click();
      await expectTanstackPage({ pagination: page1(), sorting: [{ id: "name", desc: true }], columnFilters: [] }, null, [desc("name")]);
      await page.click("#ts-last");
      await expectTanstackPage({ pagination: { pageIndex: 9_999, pageSize: 10 }, sorting: [{ id: "name", desc: true }], columnFilters: [] }, null, [desc("name")]);
      await tsHeader("name").click();
      await expectTanstackPage({ pagination: page1(), sorting: [], columnFilters: [] }, null, []);
      // TanStack's first direction for a column whose values are numbers is descending.
      await tsHeader("id").click();
      await expectTanstackPage({ pagination: page1(), sorting: [{ id: "id", desc: true }], columnFilters: [] }, null, [desc("id")]);
      await tsHeader("email").click();
      await expectTanstackPage({ pagination: page1(), sorting: [{ id: "email", desc: false }], columnFilters: [] }, null, [asc("email")]);
      await tsHeader("email").click();
      await expectTanstackPage({ pagination: page1(), sorting: [{ id: "email", desc: true }], columnFilters: [] }, null, [desc("email")]);
    },
    TEST_MS,
  );

  test(
    "filters by name, by status and by an id range",
    async () => {
      await openDemo();
      await page.selectOption("#ts-page-size", "20");
      await page.fill("#ts-filter-name", "anna");
      const byName = await expectTanstackPage(
        { pagination: page1(20), sorting: [], columnFilters: [{ id: "name", value: "anna" }] },
        text("name", "contains", "anna"),
        [],
      );
      expect(byName.pageCount).toBeGreaterThan(2);
      await page.click("#ts-last");
      await expectTanstackPage(
        { pagination: { pageIndex: byName.pageCount - 1, pageSize: 20 }, sorting: [], columnFilters: [{ id: "name", value: "anna" }] },
        text("name", "contains", "anna"),
        [],
      );
      // A filter change goes back to page 1.
      await page.selectOption("#ts-filter-status", "inactive");
      const nameAndStatus = [
        { id: "name", value: "anna" },
        { id: "status", value: "inactive" },
      ];
      await expectTanstackPage({ pagination: page1(20), sorting: [], columnFilters: nameAndStatus }, and(text("name", "contains", "anna"), statusIs("inactive")), []);
      await tsHeader("name").click();
      await expectTanstackPage(
        { pagination: page1(20), sorting: [{ id: "name", desc: false }], columnFilters: nameAndStatus },
        and(text("name", "contains", "anna"), statusIs("inactive")),
        [asc("name")],
      );
      await saveScreenshot(page, "tanstack-filtered-sorted", "#ts-panel");
      await tsHeader("name").click();
      await page.fill("#ts-filter-name", "");
      await expectTanstackPage(
        { pagination: page1(20), sorting: [{ id: "name", desc: true }], columnFilters: [{ id: "status", value: "inactive" }] },
        statusIs("inactive"),
        [desc("name")],
      );
      await tsHeader("name").click();
      await page.fill("#ts-filter-id-min", "10");
      await page.fill("#ts-filter-id-max", "50");
      const idAndStatus = [
        { id: "status", value: "inactive" },
        { id: "id", value: ["10", "50"] },
      ];
      const range = await expectTanstackPage({ pagination: page1(20), sorting: [], columnFilters: idAndStatus }, and(statusIs("inactive"), idBetween(10, 50)), []);
      expect(range.total).toBeGreaterThan(0);
      await page.selectOption("#ts-filter-status", "");
      expect(await expectTanstackPage({ pagination: page1(20), sorting: [], columnFilters: [{ id: "id", value: ["10", "50"] }] }, idBetween(10, 50), [])).toEqual({
        total: 41,
        pageCount: 3,
      });
      await page.click("#ts-next");
      await page.click("#ts-next");
      await expectTanstackPage({ pagination: { pageIndex: 2, pageSize: 20 }, sorting: [], columnFilters: [{ id: "id", value: ["10", "50"] }] }, idBetween(10, 50), []);
      await saveScreenshot(page, "tanstack-id-range-last-page", "#ts-panel");
    },
    TEST_MS,
  );

  test(
    "sends brackets raw (filter[name]) and percent-encoded (filter%5Bname%5D), with the same answers",
    async () => {
      await openDemo("?tsUrl=raw");
      const before = sentRequests.length;
      const nameFilter = [{ id: "name", value: "a k" }];
      await page.fill("#ts-filter-name", "a k");
      const raw = await expectTanstackPage({ pagination: page1(), sorting: [], columnFilters: nameFilter }, text("name", "contains", "a k"), []);
      await page.fill("#ts-filter-id-min", "10");
      await page.fill("#ts-filter-id-max", "5000");
      const both = [...nameFilter, { id: "id", value: ["10", "5000"] }];
      const nameAndId = and(text("name", "contains", "a k"), idBetween(10, 5000));
      await expectTanstackPage({ pagination: page1(), sorting: [], columnFilters: both }, nameAndId, []);

      await page.selectOption("#ts-url-mode", "encoded");
      await expectTanstackPage({ pagination: page1(), sorting: [], columnFilters: both }, nameAndId, []);
      await page.fill("#ts-filter-id-min", "");
      await page.fill("#ts-filter-id-max", "");
      expect(await expectTanstackPage({ pagination: page1(), sorting: [], columnFilters: nameFilter }, text("name", "contains", "a k"), [])).toEqual(raw);

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
