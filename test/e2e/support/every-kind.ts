/**
 * One end-to-end suite for the demo page over any table (docs/api.md "Any users table"): both
 * clients show every column of the served schema in its order, each with the filter of its
 * kind; a header sort on the key and on the first column of every other sortable kind, and a
 * filter on each of them through the client's own controls, are checked against the naive
 * oracle (test/support/table-oracle.ts) given the same request. Nothing in it names a column:
 * the columns and the values to filter by come from the table and its records.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import type { ColumnSpec } from "../../../src/schema/kinds.ts";
import { type OracleBody, type Table, type TableRecord, compareKeys, oracleFacets } from "../../support/table-oracle.ts";
import { saveScreenshot } from "./browser.ts";
import { agFloatingInput, agHeader, agHeaderTexts, expectAgWindow, expectTanstackPage, openDemoPage, tsFilter, tsHeader } from "./demo-page.ts";
import { type DemoService, type DemoSession, openDemoSession } from "./fixture.ts";

/** Per-test limit, in ms: generous, the machine has 2 cores and Chromium shares them. */
const TEST_MS = 120_000;

/** The filter UI a column has in AG Grid: a floating filter input of a type, a set filter in the header menu, or none. */
type AgFilterUi = `floating ${string}` | "menu" | "none";

/**
 * The AG Grid filter UI of a kind (src/demo/ag-grid.ts): a floating filter whose input is AG
 * Grid's number, date or text filter's (its `type` attribute tells which), a facet-fed set filter
 * in the header menu for enum and boolean columns, none for json.
 */
function agFilterUi(kind: ColumnSpec["kind"]): AgFilterUi {
  switch (kind) {
    case "json":
      return "none";
    case "enum":
    case "boolean":
      return "menu";
    case "number":
      return "floating number";
    case "date":
    case "datetime":
      return "floating date";
    default:
      return "floating text";
  }
}

/** The key column, then the first column of every other kind but json, in schema order. */
export function exercisedColumns(table: Table): ColumnSpec[] {
  const key = table.specs.find((c) => c.id === table.key) as ColumnSpec;
  const seen = new Set<string>();
  const others = table.specs.filter((c) => {
    if (c.id === table.key || c.kind === "json" || seen.has(c.kind)) return false;
    seen.add(c.kind);
    return true;
  });
  return [key, ...others];
}

/** The non-null values of a column, in its kind's order (keys by code point; strings by the records' own order otherwise). */
function presentValues(records: readonly TableRecord[], column: ColumnSpec): unknown[] {
  const values = records.map((r) => r[column.id]).filter((v) => v !== null && v !== undefined);
  if (column.kind === "number") return (values as number[]).sort((a, b) => a - b);
  if (column.kind === "date" || column.kind === "datetime") return (values as string[]).sort((a, b) => Date.parse(a) - Date.parse(b));
  return values;
}

/** The value at quantile `q` (0…1) of a column's non-null values in order. */
function quantile(records: readonly TableRecord[], column: ColumnSpec, q: number): unknown {
  const values = presentValues(records, column);
  return values[Math.min(values.length - 1, Math.floor(q * values.length))];
}

/** A substring of a text column's values that some rows hold: two characters of a value in the middle of the records. */
function textNeedle(records: readonly TableRecord[], column: ColumnSpec): string {
  const values = (presentValues(records, column) as string[]).filter((v) => v.trim().length >= 3);
  const value = values[Math.floor(values.length / 2)];
  return value.slice(0, 2);
}

/**
 * Defines the suite over the service `start` makes (started before the suite, stopped after it).
 * @param label names the table in the tests' names
 * @param start makes the service (a table with its records)
 * @returns the suite's session, for more tests over the same page (valid once the suite's `beforeAll` ran)
 */
export function everyKindSuite(label: string, start: () => DemoService | Promise<DemoService>): () => DemoSession {
  let session: DemoSession;
  let page: Page;
  let records: TableRecord[];
  let table: Table;

  beforeAll(async () => {
    session = await openDemoSession(await start());
    page = session.page;
    ({ records, table } = session.service);
  }, TEST_MS);

  afterAll(async () => {
    await session?.close();
  });

  const open = () => openDemoPage(page, `${session.service.server.url}/`);
  const agWindow = (body: OracleBody) => expectAgWindow(page, records, table, body);
  const body = (sortModel: OracleBody["sortModel"] = [], filterModel: OracleBody["filterModel"] = {}): OracleBody => ({ sortModel, filterModel });

  describe(`${label}: AG Grid`, () => {
    test(
      "every column of the schema in its order, sortable but json, with its kind's filter; the first block's rows whole",
      async () => {
        await open();
        const ids = table.specs.map((c) => c.id);
        expect(await agHeaderTexts(page, ids)).toEqual(ids);
        const seen: { id: string; sortable: boolean; filter: AgFilterUi }[] = [];
        for (const column of table.specs) {
          await page.evaluate((c) => window.gridApi.ensureColumnVisible(c), column.id);
          await page.locator(`.ag-header-cell[col-id="${column.id}"] .ag-header-cell-text`).first().waitFor();
          const header = page.locator(`.ag-header-cell[col-id="${column.id}"]:not(.ag-floating-filter)`).first();
          const sortable = ((await header.getAttribute("class")) ?? "").split(/\s+/).includes("ag-header-cell-sortable");
          const floating = (await agFloatingInput(page, column.id).count()) > 0 ? await agFloatingInput(page, column.id).first().getAttribute("type") : null;
          const menu = (await header.locator(".ag-header-cell-filter-button").count()) > 0;
          seen.push({ id: column.id, sortable, filter: floating !== null ? `floating ${floating}` : menu ? "menu" : "none" });
        }
        expect(seen).toEqual(table.specs.map((c) => ({ id: c.id, sortable: c.kind !== "json", filter: agFilterUi(c.kind) })));
        await page.evaluate(() => window.gridApi.ensureIndexVisible(0));
        expect(await agWindow(body())).toBe(records.length);
        expect(session.pageErrors).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "a header click sorts each kind ascending, a second descending (the key, then one column of every kind)",
      async () => {
        await open();
        for (const column of exercisedColumns(table)) {
          await page.evaluate((c) => window.gridApi.ensureColumnVisible(c), column.id);
          await agHeader(page, column.id).click();
          await agWindow(body([{ colId: column.id, sort: "asc" }]));
          await agHeader(page, column.id).click();
          await agWindow(body([{ colId: column.id, sort: "desc" }]));
        }
        expect(session.pageErrors).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "the grid's own filters on each kind: floating number, text and date filters, the facet-fed set filter on enum and boolean columns",
      async () => {
        await open();
        for (const column of exercisedColumns(table)) {
          // the previous column's filter off, and the grid back to every row, before the next
          await page.evaluate(() => window.gridApi.setFilterModel(null));
          expect(await agWindow(body())).toBe(records.length);
          await page.evaluate((c) => window.gridApi.ensureColumnVisible(c), column.id);
          const isKey = column.id === table.key;
          if (column.kind === "number") {
            const value = quantile(records, column, 0.5) as number;
            await agFloatingInput(page, column.id).fill(String(value));
            const total = await agWindow(body([], { [column.id]: { filterType: "number", type: "equals", filter: value } }));
            expect(total).toBeGreaterThan(0);
          } else if (column.kind === "text") {
            const needle = isKey ? String(quantile(records, column, 0.5)).slice(0, 2) : textNeedle(records, column);
            await agFloatingInput(page, column.id).fill(needle);
            const total = await agWindow(body([], { [column.id]: { filterType: "text", type: "contains", filter: needle } }));
            expect(total).toBeGreaterThan(0);
          } else if (column.kind === "date" || column.kind === "datetime") {
            const day = String(quantile(records, column, 0.5)).slice(0, 10);
            await agFloatingInput(page, column.id).fill(day);
            const total = await agWindow(body([], { [column.id]: { filterType: "date", type: "equals", dateFrom: day, dateTo: null } }));
            expect(total).toBeGreaterThan(0);
          } else if (column.kind === "enum" || column.kind === "boolean") {
            // the set filter lists the facets endpoint's counts, then ticks a value (and the empty cells when there are some)
            await page.locator(`.ag-header-cell[col-id="${column.id}"] .ag-header-cell-filter-button`).click();
            const facet = oracleFacets(records, table, { columns: [column.id], filterModel: {}, limit: 50 }).facets[column.id] as { values: { value: unknown; count: number }[]; nulls: number };
            const listedValues = [...facet.values, ...(facet.nulls > 0 ? [{ value: null, count: facet.nulls }] : [])];
            const labels = listedValues.map((v) => (v.value === null ? "(empty)" : String(v.value)));
            await page.waitForFunction(
              ([c, want]) => JSON.stringify(Array.from(document.querySelectorAll(`.facet-filter[data-column="${c}"] .facet-value span:first-of-type`)).map((s) => s.textContent)) === want,
              [column.id, JSON.stringify(labels)] as const,
            ).catch(() => {});
            const listed = await page.$$eval(`.facet-filter[data-column="${column.id}"] .facet-value`, (rows) =>
              rows.map((row) => ({ value: row.querySelector("input")?.getAttribute("value"), count: Number(row.querySelector(".facet-count")?.textContent?.replace(/,/g, "")) })),
            );
            expect(listed).toEqual(listedValues.map((v) => ({ value: JSON.stringify(v.value), count: v.count })));
            const picked = listedValues[Math.min(1, listedValues.length - 1)].value;
            await page.locator(`.facet-filter[data-column="${column.id}"] input[value='${JSON.stringify(picked)}']`).check();
            const values = [picked];
            if (facet.nulls > 0 && picked !== null) {
              await page.locator(`.facet-filter[data-column="${column.id}"] input[value='null']`).check();
              values.push(null);
            }
            const total = await agWindow(body([], { [column.id]: { filterType: "set", values } }));
            expect(total).toBe(listedValues.filter((v) => values.includes(v.value)).reduce((n, v) => n + v.count, 0));
            await page.keyboard.press("Escape");
          }
        }
        // several kinds at once (AND), set through the grid's api: ranges and a negated text filter
        const columns = exercisedColumns(table).filter((c) => c.id !== table.key);
        const model: OracleBody["filterModel"] = {};
        for (const column of columns) {
          if (column.kind === "number") model[column.id] = { filterType: "number", type: "inRange", filter: quantile(records, column, 0.05), filterTo: quantile(records, column, 0.95) };
          if (column.kind === "date" || column.kind === "datetime") model[column.id] = { filterType: "date", type: "greaterThan", dateFrom: `${String(quantile(records, column, 0.2)).slice(0, 10)} 00:00:00`, dateTo: null };
          if (column.kind === "text") model[column.id] = { filterType: "text", type: "notContains", filter: textNeedle(records, column) };
        }
        await page.evaluate((m) => window.gridApi.setFilterModel(m), model);
        expect(await agWindow(body([], model))).toBeGreaterThan(0);
        await saveScreenshot(page, `every-kind-${label.replace(/\W+/g, "-")}-ag-grid`, "#ag-panel");
        expect(session.pageErrors).toEqual([]);
      },
      TEST_MS,
    );
  });

  describe(`${label}: TanStack Table`, () => {
    test(
      "every column of the schema in its order, sortable but json, with its kind's filter control under the header",
      async () => {
        await open();
        const headers = await page.$$eval("#ts-thead th[data-column]", (ths) => ths.map((th) => ({ id: (th as HTMLElement).dataset.column, sortable: th.classList.contains("sortable") })));
        expect(headers).toEqual(table.specs.map((c) => ({ id: c.id, sortable: c.kind !== "json" })));
        const controls = await page.$$eval("#ts-thead .filter-row th", (ths) =>
          ths.map((th) => {
            const control = th.querySelector("[data-filter]") as HTMLInputElement | HTMLSelectElement | null;
            if (control === null) return null;
            return { id: control.dataset.filter, tag: control.tagName.toLowerCase(), options: control instanceof HTMLSelectElement ? Array.from(control.options).map((o) => o.value) : null };
          }),
        );
        expect(controls).toEqual(
          table.specs.map((c) => {
            if (c.kind === "json") return null;
            if (c.kind === "enum") return { id: c.id, tag: "select", options: ["", ...(c.values ?? [])] };
            if (c.kind === "boolean") return { id: c.id, tag: "select", options: ["", "true", "false"] };
            return { id: c.id, tag: "input", options: null };
          }),
        );
        await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10 });
        // the first row, every column, as the page shows it
        const cells = await page.$$eval("#ts-tbody tr:first-child td", (tds) => tds.map((td) => [(td as HTMLElement).dataset.column, td.textContent]));
        const first = [...records].sort((a, b) => compareKeys(a[table.key], b[table.key]))[0];
        expect(cells).toEqual(table.specs.map((c) => [c.id, first[c.id] === null ? "" : c.kind === "json" ? JSON.stringify(first[c.id]) : String(first[c.id])]));
        expect(session.pageErrors).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "a header click sorts each kind, a second click reverses it (the key, then one column of every kind)",
      async () => {
        await open();
        for (const column of exercisedColumns(table)) {
          await tsHeader(page, column.id).click();
          // the first click sorts number columns descending, the others ascending (src/demo/tanstack.ts)
          const first = column.kind === "number";
          await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10, sort: { id: column.id, desc: first } });
          await page.click("#ts-next");
          await expectTanstackPage(page, records, table, { pageIndex: 1, pageSize: 10, sort: { id: column.id, desc: first } });
          await tsHeader(page, column.id).click();
          await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10, sort: { id: column.id, desc: !first } });
          await tsHeader(page, column.id).click();
          await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10 });
        }
        expect(session.pageErrors).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "the controls under the headers send each kind's GET filter: ranges, substrings, whole keys, selects fed by facets",
      async () => {
        await open();
        let faceted: { column: ColumnSpec; value: string } | null = null;
        let needle: { column: ColumnSpec; value: string } | null = null;
        for (const column of exercisedColumns(table)) {
          const isKey = column.id === table.key;
          let value: string;
          if (column.kind === "number") value = `${quantile(records, column, 0.2)},${quantile(records, column, 0.4)}`;
          else if (column.kind === "date") value = `${quantile(records, column, 0.3)},${quantile(records, column, 0.6)}`;
          else if (column.kind === "datetime") value = `${String(quantile(records, column, 0.7)).slice(0, 10)},`;
          else if (column.kind === "text" && isKey) value = `${quantile(records, column, 0.25)},${quantile(records, column, 0.75)}`;
          else if (column.kind === "text") value = textNeedle(records, column);
          else value = column.kind === "boolean" ? "false" : (column.values ?? [])[1];
          if (column.kind === "enum" || column.kind === "boolean") {
            // the select shows the server's counts of every value
            const facet = oracleFacets(records, table, { columns: [column.id], filterModel: {}, limit: 50 }).facets[column.id] as { values: { value: unknown; count: number }[] };
            const count = facet.values.find((v) => String(v.value) === value)?.count ?? 0;
            await page.waitForFunction(
              ([c, v, n]) => document.querySelector(`#ts-thead select[data-filter="${c}"] option[value="${v}"]`)?.getAttribute("data-count") === n,
              [column.id, value, String(count)] as const,
            );
            await tsFilter(page, column.id).selectOption(value);
            faceted ??= { column, value };
          } else {
            await tsFilter(page, column.id).fill(value);
            if (column.kind === "text" && !isKey) needle ??= { column, value };
          }
          const { total } = await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10, filters: { [column.id]: value } });
          expect(total).toBeGreaterThan(isKey && column.kind === "text" ? 1 : 0);
          if (column.kind === "enum" || column.kind === "boolean") await tsFilter(page, column.id).selectOption("");
          else await tsFilter(page, column.id).fill("");
          await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10 });
        }
        // two filters at once (AND), sorted by the text column, a later page
        if (faceted !== null && needle !== null) {
          const filters = { [faceted.column.id]: faceted.value, [needle.column.id]: needle.value };
          await tsFilter(page, faceted.column.id).selectOption(faceted.value);
          await tsFilter(page, needle.column.id).fill(needle.value);
          await tsHeader(page, needle.column.id).click();
          await tsHeader(page, needle.column.id).click();
          await page.waitForFunction((c) => window.tanstackDemo.snapshot().sorting[0]?.id === c, needle.column.id);
          const desc = await page.evaluate(() => window.tanstackDemo.snapshot().sorting[0].desc);
          const both = await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10, sort: { id: needle.column.id, desc }, filters });
          expect(both.total).toBeGreaterThan(0);
          if (both.pageCount > 1) {
            await page.click("#ts-last");
            await expectTanstackPage(page, records, table, { pageIndex: both.pageCount - 1, pageSize: 10, sort: { id: needle.column.id, desc }, filters });
          }
          await saveScreenshot(page, `every-kind-${label.replace(/\W+/g, "-")}-tanstack`, "#ts-panel");
        }
        expect(session.pageErrors).toEqual([]);
      },
      TEST_MS,
    );
  });
  return () => session;
}
