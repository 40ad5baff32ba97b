/**
 * Reading the demo page in Chromium and checking it against the naive oracle of any table
 * (test/support/table-oracle.ts): what AG Grid shows for a window of rows, what the TanStack
 * table shows for a page, each compared with the oracle's answer to the same request. Waits are
 * on the page's own state (`waitForFunction`), with no time limit (support/browser.ts): a state
 * that never comes is the test's timeout's to end.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { type OracleBody, type Table, type TableRecord, oracleGet, oracleRows } from "../../support/table-oracle.ts";

/** AG Grid's block size (src/demo/ag-grid.ts `AG_BLOCK_ROWS`). */
export const BLOCK = 100;

/** Loads the demo page at `url` and waits until both clients show their first answer. */
export async function openDemoPage(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(
    () => window.agRequests?.some((r) => r.status === 200) === true && window.tanstackDemo?.snapshot().settled === true,
    null,
  );
}

/** JSON with every object's keys sorted: two filter models compare equal whatever order their columns were set in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));
}

/** What AG Grid shows: its row count and the data of rows [start, start + count) (null: not loaded). */
export interface AgView {
  rowCount: number;
  rows: (Record<string, unknown> | null)[];
}

/** Reads AG Grid's row count and rows [start, start + count) (reading a row of an unloaded block makes the grid fetch it). */
export function agView(page: Page, start: number, count: number): Promise<AgView> {
  return page.evaluate(
    ([from, n]) => {
      const api = window.gridApi;
      const rows = [];
      for (let i = from; i < from + n; i++) rows.push(api.getDisplayedRowAtIndex(i)?.data ?? null);
      return { rowCount: api.getDisplayedRowCount(), rows };
    },
    [start, count] as const,
  );
}

/**
 * Waits until AG Grid has had an answer to `body`'s sort and filters (and search), its row
 * count is the oracle's total and rows [start, start + limit) hold the oracle's keys, then
 * asserts the whole rows (every column) against the oracle's records. `limit` stays inside one or
 * two blocks the grid loaded already.
 * @returns the oracle's total
 */
export async function expectAgWindow(page: Page, records: readonly TableRecord[], table: Table, body: OracleBody, start = 0, limit = BLOCK): Promise<number> {
  const sorted = oracleRows(records, table, body);
  const want = sorted.slice(start, start + limit);
  const keys = want.map((r) => r[table.key]);
  const sent = { sortModel: body.sortModel.map((k) => ({ colId: k.colId, sort: k.sort })), filterModel: body.filterModel, quickFilter: body.quickFilter ?? "" };
  await page
    .waitForFunction(
      ([from, expected, total, key, request]) => {
        const canonical = (value: unknown) =>
          JSON.stringify(value, (_, v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));
        const answered = window.agRequests.some((r) => {
          const model = (r.body.sortModel as { colId: string; sort: string }[]).map((k) => ({ colId: k.colId, sort: k.sort }));
          return r.status === 200 && canonical({ sortModel: model, filterModel: r.body.filterModel, quickFilter: r.body.quickFilter }) === request;
        });
        if (!answered) return false;
        const api = window.gridApi;
        if (api.getDisplayedRowCount() !== total) return false;
        return (expected as unknown[]).every((k, i) => api.getDisplayedRowAtIndex(from + i)?.data?.[key] === k);
      },
      [start, keys, sorted.length, table.key, canonical(sent)] as const,
    )
    .catch(() => {});
  expect(await agView(page, start, want.length)).toEqual({ rowCount: sorted.length, rows: want });
  return sorted.length;
}

/** A TanStack view: the state the table is in, which is also the GET request it sends. */
export interface TsView {
  pageIndex: number;
  pageSize: number;
  /** The sort, if any (GET has one sort column). */
  sort?: { id: string; desc: boolean };
  /** Column filter values by column id, as the filter controls set them. */
  filters?: Record<string, string>;
  /** The search (global filter), "" or absent for none. */
  q?: string;
}

/** The view's state as `window.tanstackDemo.snapshot()` reports it (filters by column id, in id order). */
function stateOf(view: TsView) {
  return {
    pagination: { pageIndex: view.pageIndex, pageSize: view.pageSize },
    sorting: view.sort === undefined ? [] : [view.sort],
    columnFilters: Object.entries(view.filters ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([id, value]) => ({ id, value })),
    globalFilter: view.q ?? "",
  };
}

/**
 * Waits until the TanStack client is settled in `view` (its state, nothing in flight, the rows
 * shown answering that state), then asserts its page against the oracle's answer to the same
 * GET: the rows' keys, the total, the page count, and the same in the DOM ("Page X of Y",
 * "N total", the key column's cells).
 * @returns the oracle's total and page count
 */
export async function expectTanstackPage(page: Page, records: readonly TableRecord[], table: Table, view: TsView): Promise<{ total: number; pageCount: number }> {
  const want = stateOf(view);
  await page
    .waitForFunction(
      (expected) => {
        const s = window.tanstackDemo.snapshot();
        const filters = [...s.columnFilters].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((f) => ({ id: f.id, value: String(f.value) }));
        return s.settled && JSON.stringify({ pagination: s.pagination, sorting: s.sorting, columnFilters: filters, globalFilter: s.globalFilter }) === expected;
      },
      JSON.stringify(want),
    )
    .catch(() => {});
  const snap = await page.evaluate(() => window.tanstackDemo.snapshot());
  const got = {
    settled: snap.settled,
    error: snap.error,
    pagination: snap.pagination,
    sorting: snap.sorting,
    columnFilters: [...snap.columnFilters].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((f) => ({ id: f.id, value: String(f.value) })),
    globalFilter: snap.globalFilter,
  };
  expect(got).toEqual({ settled: true, error: null, ...want });
  const expected = oracleGet(records, table, {
    filters: view.filters ?? {},
    q: view.q,
    sortBy: view.sort?.id,
    sortOrder: view.sort?.desc === true ? "desc" : "asc",
    page: view.pageIndex + 1,
    pageSize: view.pageSize,
  });
  const pageCount = Math.ceil(expected.total / view.pageSize);
  expect({ total: snap.total, pageCount: snap.pageCount, keys: snap.rows.map((r) => r[table.key]) }).toEqual({ total: expected.total, pageCount, keys: expected.keys });
  const dom = await page.evaluate(
    (key) => ({
      pageInfo: document.getElementById("ts-page-info")?.textContent,
      total: document.getElementById("ts-total")?.textContent,
      keys: Array.from(document.querySelectorAll(`#ts-tbody td[data-column="${key}"]`)).map((td) => td.textContent),
    }),
    table.key,
  );
  expect(dom).toEqual({
    pageInfo: `Page ${pageCount === 0 ? 0 : view.pageIndex + 1} of ${pageCount}`,
    total: `${expected.total.toLocaleString("en")} total`,
    keys: expected.keys.map(String),
  });
  return { total: expected.total, pageCount };
}

/** The TanStack header cell of a column (a click toggles its sort). */
export const tsHeader = (page: Page, column: string) => page.locator(`#ts-thead th[data-column="${column}"]`);

/** The TanStack filter control (input or select) under a column's header. */
export const tsFilter = (page: Page, column: string) => page.locator(`#ts-thead [data-filter="${column}"]`);

/** AG Grid's header label of a column (a click sorts; shift-click adds a key). */
export const agHeader = (page: Page, column: string) => page.locator(`.ag-header-cell[col-id="${column}"] .ag-header-cell-label`);

/** AG Grid's floating filter input of a column. */
export const agFloatingInput = (page: Page, column: string) => page.locator(`.ag-floating-filter[col-id="${column}"] input:not([disabled])`);

/** Number of AG Grid requests the page finished so far. */
export function agRequestCount(page: Page): Promise<number> {
  return page.evaluate(() => window.agRequests.length);
}

/**
 * The header text of each of `ids` as AG Grid renders it: each column scrolled into view
 * (`ensureColumnVisible`, the grid renders only the columns in view), then its header cell read
 * from the DOM once rendered (a column never rendered is waited for until the test's timeout).
 */
export async function agHeaderTexts(page: Page, ids: readonly string[]): Promise<(string | null)[]> {
  const texts: (string | null)[] = [];
  for (const id of ids) {
    await page.evaluate((c) => window.gridApi.ensureColumnVisible(c), id);
    const cell = page.locator(`.ag-header-cell[col-id="${id}"] .ag-header-cell-text`).first();
    await cell.waitFor();
    texts.push(await cell.textContent());
  }
  return texts;
}
