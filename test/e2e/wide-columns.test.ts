/**
 * End to end over a wide snapshot (docs/api.md "Columns beyond the four"): the demo page reads
 * the served columns from GET /api/users/schema; AG Grid shows every column, with its date filter
 * on `created_at` and a sort from a header click, and TanStack Table a filter box per added
 * column; what both show is checked against the naive wide oracle on the same records.
 *
 * Needs /usr/bin/chromium: `sh scripts/install-chromium.sh` (as root).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { WIDE_COLUMN_SPECS } from "../../src/generate/wide.ts";
import { oracleGet, oraclePost } from "../support/table-oracle.ts";
import type { WideRecord } from "../support/table-store.ts";
import { saveScreenshot } from "./support/browser.ts";
import { type WideDemoService, type WideDemoSession, openWideDemo } from "./support/fixture.ts";

const COUNT = 5000;
const SEED = 11;
const TEST_MS = 120_000;
const WAIT_MS = 30_000;

let session: WideDemoSession;
let server: WideDemoService["server"];
let page: Page;
let records: WideRecord[];
let pageErrors: string[];

beforeAll(async () => {
  session = await openWideDemo(COUNT, SEED);
  ({ page, pageErrors } = session);
  ({ server, records } = session.service);
}, TEST_MS);

afterAll(async () => {
  await session?.close();
});

/** The ids AG Grid shows in rows [0, n) once they are loaded. */
async function agIds(n: number): Promise<number[]> {
  await page.waitForFunction((k) => window.gridApi.getDisplayedRowAtIndex(k - 1)?.data !== undefined || window.agRequests.at(-1)?.total !== undefined, n, { timeout: WAIT_MS });
  return page.evaluate((k) => Array.from({ length: k }, (_, i) => window.gridApi.getDisplayedRowAtIndex(i)?.data?.id as number).filter((id) => id !== undefined), n);
}

describe("the demo page over a wide snapshot", () => {
  test(
    "AG Grid: every column, a date filter and a header sort on created_at, as the oracle answers",
    async () => {
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.gridApi?.getDisplayedRowAtIndex(0)?.data !== undefined && window.tanstackDemo?.snapshot().settled === true, null, { timeout: WAIT_MS });
      const first = await page.evaluate(() => window.gridApi.getDisplayedRowAtIndex(0)?.data as Record<string, unknown>);
      expect(Object.keys(first)).toEqual(["id", "name", "email", "status", ...WIDE_COLUMN_SPECS.map((c) => c.id)]);

      // AG Grid's own date filter model, through the grid
      const model = { created_at: { filterType: "date", type: "inRange", dateFrom: "2020-01-01 00:00:00", dateTo: "2021-01-01 00:00:00" } };
      const before = await page.evaluate(() => window.agRequests.length);
      await page.evaluate((m) => window.gridApi.setFilterModel(m), model);
      await page.waitForFunction((k) => window.agRequests.length > k && window.agRequests.at(-1)?.status === 200, before, { timeout: WAIT_MS });
      const filtered = oraclePost(records, WIDE_COLUMN_SPECS, { startRow: 0, endRow: 100, sortModel: [], filterModel: model });
      expect(filtered.total).toBeGreaterThan(100);
      expect(await page.evaluate(() => window.agRequests.at(-1)?.total)).toBe(filtered.total);
      expect(await agIds(100)).toEqual(filtered.ids);

      // a click on the created_at header: descending after two clicks
      await page.evaluate(() => window.gridApi.ensureColumnVisible("created_at"));
      const header = page.locator('.ag-header-cell[col-id="created_at"] .ag-header-cell-label');
      await header.click();
      await header.click();
      await page.waitForFunction(
        () => {
          const m = window.agRequests.at(-1)?.body.sortModel as { colId: string; sort: string }[] | undefined;
          return m?.length === 1 && m[0].colId === "created_at" && m[0].sort === "desc";
        },
        null,
        { timeout: WAIT_MS },
      );
      const sorted = oraclePost(records, WIDE_COLUMN_SPECS, { startRow: 0, endRow: 100, sortModel: [{ colId: "created_at", sort: "desc" }], filterModel: model });
      await page.waitForFunction((id) => window.gridApi.getDisplayedRowAtIndex(0)?.data?.id === id, sorted.ids[0], { timeout: WAIT_MS });
      expect(await agIds(100)).toEqual(sorted.ids);
      await saveScreenshot(page, "ag-grid-wide", "#ag-panel");
      expect(pageErrors).toEqual([]);
    },
    TEST_MS,
  );

  test(
    "TanStack Table: a column per field, a filter box (enum and boolean: a select of values) per added column sending the GET forms",
    async () => {
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.tanstackDemo?.snapshot().settled === true, null, { timeout: WAIT_MS });
      const headers = await page.evaluate(() => Array.from(document.querySelectorAll("#ts-thead th[data-column]")).map((th) => (th as HTMLElement).dataset.column));
      expect(headers).toEqual(["id", "name", "email", "status", ...WIDE_COLUMN_SPECS.map((c) => c.id)]);
      const boxes = await page.evaluate(() => Array.from(document.querySelectorAll("#ts-thead [data-filter]")).map((i) => `${i.tagName.toLowerCase()} ${(i as HTMLElement).dataset.filter}`));
      expect(boxes).toEqual(WIDE_COLUMN_SPECS.filter((c) => c.kind !== "json").map((c) => `${c.kind === "enum" || c.kind === "boolean" ? "select" : "input"} ${c.id}`));

      await page.selectOption('#ts-thead select[data-filter="role"]', "admin");
      await page.fill('#ts-thead input[data-filter="age"]', "30,40");
      await page.waitForFunction(() => {
        const s = window.tanstackDemo.snapshot();
        return s.settled && s.columnFilters.length === 2;
      }, null, { timeout: WAIT_MS });
      const snap = await page.evaluate(() => window.tanstackDemo.snapshot());
      const expected = oracleGet(records, WIDE_COLUMN_SPECS, { filters: { role: "admin", age: "30,40" }, sortOrder: "asc", page: 1, pageSize: 10 });
      expect(expected.total).toBeGreaterThan(0);
      expect({ total: snap.total, ids: snap.rows.map((r) => r.id) }).toEqual(expected);
      expect(decodeURIComponent(snap.url)).toContain("filter[age]=30,40");
      expect(pageErrors).toEqual([]);
    },
    TEST_MS,
  );
});
