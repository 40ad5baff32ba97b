/**
 * End to end: the demo page's search box, facet-fed filters and export buttons in Chromium over
 * a wide snapshot (docs/api.md "Global search", "Facets", "Export"). The search box drives both
 * clients; AG Grid's set filter on an enum column lists the facet counts and filters by a
 * ticked value; TanStack's faceted select shows the counts and filters by a picked value; each
 * client's "Export CSV" downloads its current view; a search nothing matches shows the empty
 * state. Every count, row and downloaded line is checked against the naive wide oracle.
 *
 * Needs /usr/bin/chromium: `sh scripts/install-chromium.sh` (as root).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { csvRows } from "../support/csv.ts";
import { type TableRecord, oracleFacets, oracleRows } from "../support/table-oracle.ts";
import { saveScreenshot } from "./support/browser.ts";
import { type DemoService, type DemoSession, WIDE_TABLE, openWideDemo } from "./support/fixture.ts";

const COUNT = 5000;
const SEED = 11;
const TEST_MS = 120_000;
const VIEWPORT = { width: 1280, height: 900 };
const SEARCH = "an 1";

let session: DemoSession;
let server: DemoService["server"];
let page: Page;
let records: TableRecord[];
let pageErrors: string[];

beforeAll(async () => {
  session = await openWideDemo(COUNT, SEED, VIEWPORT);
  ({ page, pageErrors } = session);
  ({ server, records } = session.service);
}, TEST_MS);

afterAll(async () => {
  await session?.close();
});

/** Clicks `selector` and returns the text of the file the click downloads. */
async function download(selector: string): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([page.waitForEvent("download"), page.click(selector)]);
  const path = await file.path();
  return { name: file.suggestedFilename(), text: readFileSync(path, "utf8") };
}

const ids = (rows: TableRecord[]) => rows.map((r) => r.id as number);

describe("search box, facet-fed filters and export in the demo page", () => {
  test(
    "the search box drives both clients; AG Grid's set filter lists the facet counts and filters; its export downloads the view",
    async () => {
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.gridApi?.getDisplayedRowAtIndex(0)?.data !== undefined && window.tanstackDemo?.snapshot().settled === true, null);

      await page.fill("#search", SEARCH);
      const searched = oracleRows(records, WIDE_TABLE, { sortModel: [], filterModel: {}, quickFilter: SEARCH });
      expect(searched.length).toBeGreaterThan(100);
      await page.waitForFunction((q) => window.agRequests.at(-1)?.body.quickFilter === q && window.agRequests.at(-1)?.status === 200, SEARCH);
      expect(await page.evaluate(() => window.agRequests.at(-1)?.total)).toBe(searched.length);
      await page.waitForFunction((q) => window.tanstackDemo.snapshot().globalFilter === q && window.tanstackDemo.snapshot().settled, SEARCH);
      const ts = await page.evaluate(() => window.tanstackDemo.snapshot());
      expect(ts.total).toBe(searched.length);
      expect(ts.url).toContain("q=an+1");
      expect(ids(ts.rows)).toEqual(ids(searched.slice(0, 10)));
      expect(await page.textContent("#ag-status")).toContain(`of ${searched.length.toLocaleString("en")} matching`);
      expect(await page.textContent("#ts-latency")).toMatch(/^\d+ ms$/);

      // AG Grid's set filter on `role`: the facet counts under the search, then a ticked value
      await page.evaluate(() => window.gridApi.ensureColumnVisible("role"));
      await page.locator('.ag-header-cell[col-id="role"] .ag-header-cell-filter-button').click();
      await page.waitForSelector('.facet-filter[data-column="role"] .facet-value');
      const facet = oracleFacets(records, WIDE_TABLE, { columns: ["role"], filterModel: {}, quickFilter: SEARCH, limit: 50 }).facets.role as { values: { value: string; count: number }[] };
      const listed = await page.$$eval('.facet-filter[data-column="role"] .facet-value', (labels) => labels.map((l) => ({ value: l.querySelector("span")?.textContent, count: Number(l.querySelector(".facet-count")?.textContent?.replace(/,/g, "")) })));
      expect(listed).toEqual(facet.values);
      await saveScreenshot(page, "demo-facet-filter", "#ag-panel");
      const picked = facet.values[1].value;
      const before = await page.evaluate(() => window.agRequests.length);
      await page.locator(`.facet-filter[data-column="role"] input[value='${JSON.stringify(picked)}']`).check();
      await page.waitForFunction((k) => window.agRequests.length > k && window.agRequests.at(-1)?.status === 200, before);
      const filterModel = { role: { filterType: "set", values: [picked] } };
      expect(await page.evaluate(() => window.agRequests.at(-1)?.body.filterModel)).toEqual(filterModel);
      const narrowed = oracleRows(records, WIDE_TABLE, { sortModel: [], filterModel, quickFilter: SEARCH });
      expect(await page.evaluate(() => window.agRequests.at(-1)?.total)).toBe(narrowed.length);
      await page.keyboard.press("Escape");

      // the grid's export: its view (the ticked role and the search), every row, as CSV
      const file = await download("#ag-export");
      expect(file.name).toMatch(/^users-[0-9a-f]{16}\.csv$/);
      const rows = csvRows(file.text);
      expect(rows[0]).toEqual(WIDE_TABLE.specs.map((c) => c.id));
      expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(ids(narrowed));
      expect(rows.slice(1).map((r) => r[1])).toEqual(narrowed.map((r) => r.name as string));
      expect(pageErrors).toEqual([]);
    },
    TEST_MS,
  );

  test(
    "TanStack's faceted select shows the server's counts and filters; its export button downloads the view; an empty result shows the empty state, whose button clears the search and the filters",
    async () => {
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.tanstackDemo?.snapshot().settled === true, null);
      await page.fill("#search", SEARCH);
      await page.waitForFunction((q) => window.tanstackDemo.snapshot().globalFilter === q && window.tanstackDemo.snapshot().settled, SEARCH);
      const facet = oracleFacets(records, WIDE_TABLE, { columns: ["role"], filterModel: {}, quickFilter: SEARCH, limit: 50 }).facets.role as { values: { value: string; count: number }[] };
      const select = 'select[data-filter="role"]';
      await page.waitForFunction(
        ([s, first]) => document.querySelector(`${s} option[value="${first.value}"]`)?.getAttribute("data-count") === String(first.count),
        [select, facet.values[0]] as const,
      );
      const options = await page.$$eval(`${select} option`, (os) => os.filter((o) => o.getAttribute("value") !== "").map((o) => ({ value: o.getAttribute("value"), count: Number(o.dataset.count) })));
      const expected = WIDE_TABLE.specs.find((c) => c.id === "role")?.values?.map((v) => ({ value: v, count: facet.values.find((f) => f.value === v)?.count ?? 0 }));
      expect(options).toEqual(expected as never);

      const picked = facet.values[0].value;
      await page.selectOption(select, picked);
      await page.waitForFunction((v) => window.tanstackDemo.snapshot().columnFilters.some((f) => f.id === "role" && f.value === v) && window.tanstackDemo.snapshot().settled, picked);
      // GET filter[role] is a whole value (docs/api.md), the search stays
      const viewRows = oracleRows(records, WIDE_TABLE, { sortModel: [], filterModel: { role: { filterType: "set", values: [picked] } }, quickFilter: SEARCH });
      expect((await page.evaluate(() => window.tanstackDemo.snapshot())).total).toBe(viewRows.length);
      await page.click('#ts-thead th[data-column="name"]');
      await page.waitForFunction(() => window.tanstackDemo.snapshot().sorting[0]?.id === "name" && window.tanstackDemo.snapshot().settled, null);
      const file = await download("#ts-export");
      const sorted = oracleRows(records, WIDE_TABLE, { sortModel: [{ colId: "name", sort: "asc" }], filterModel: { role: { filterType: "set", values: [picked] } }, quickFilter: SEARCH });
      expect(csvRows(file.text).slice(1).map((r) => Number(r[0]))).toEqual(ids(sorted));
      await saveScreenshot(page, "demo-tanstack-faceted", "#ts-panel");

      // nothing matches: both panels say so, and the clear button brings every row back
      await page.fill("#search", "qqqzzzxxx");
      await page.waitForSelector("#ts-empty:not([hidden])");
      await page.waitForSelector("#ag-empty:not([hidden])");
      await saveScreenshot(page, "demo-empty-state");
      await page.click("#ts-clear");
      await page.waitForFunction(() => window.tanstackDemo.snapshot().globalFilter === "" && window.tanstackDemo.snapshot().settled && window.tanstackDemo.snapshot().columnFilters.length === 0, null);
      expect((await page.evaluate(() => window.tanstackDemo.snapshot())).total).toBe(records.length);
      expect(await page.inputValue("#search")).toBe("");
      expect(await page.inputValue(select)).toBe("");
      expect(pageErrors).toEqual([]);
    },
    TEST_MS,
  );

  test(
    "the page fits a phone: no horizontal scroll of the page itself",
    async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.tanstackDemo?.snapshot().settled === true, null);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await saveScreenshot(page, "demo-phone");
      await page.setViewportSize({ width: 1280, height: 900 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
    },
    TEST_MS,
  );
});
