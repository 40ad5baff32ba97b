/**
 * End to end over a users table keyed by a UUID (docs/api.md "Any users table"): `user_id` a text
 * key, no `email`, a `status` of active / invited / suspended / deleted declared in that order,
 * and a column of every other kind. The demo page takes everything from GET /api/users/schema:
 * both clients show every column with the filter of its kind, and a sort and a filter per kind
 * through each client match the naive oracle (test/e2e/support/every-kind.ts). Then the search box
 * over the key and the text columns, the status select's declared order, and the export of a
 * filtered, sorted view.
 *
 * Needs /usr/bin/chromium: `sh scripts/install-chromium.sh` (as root).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { csvRows } from "../support/csv.ts";
import { oracleRows } from "../support/table-oracle.ts";
import { agHeader, expectAgWindow, expectTanstackPage, openDemoPage, tsFilter, tsHeader } from "./support/demo-page.ts";
import { everyKindSuite } from "./support/every-kind.ts";
import { UUID_STATUS_VALUES, UUID_TABLE, startTableDemoService, uuidUsers } from "./support/fixture.ts";

const TEST_MS = 120_000;

const session = everyKindSuite("a UUID-keyed table", () => startTableDemoService(uuidUsers(3000, 23), UUID_TABLE));

describe("a UUID-keyed table: search, the status select, export", () => {
  test(
    "the search box finds a key by a fragment and names by a word in both clients; the status select lists the declared values in order",
    async () => {
      const { page, service, pageErrors } = session();
      const { records, table } = service;
      await openDemoPage(page, `${service.server.url}/`);
      const options = await page.$$eval('#ts-thead select[data-filter="status"] option', (os) => os.map((o) => (o as HTMLOptionElement).value));
      expect(options).toEqual(["", ...UUID_STATUS_VALUES]);
      // a key fragment and a word of a name (docs/api.md "Global search": the key is searchable)
      const target = records[1234];
      const search = `${String(target.user_id).slice(9, 18)} ${String(target.display_name).split(" ")[0]}`;
      await page.fill("#search", search);
      const expected = oracleRows(records, table, { sortModel: [], filterModel: {}, quickFilter: search });
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.map((r) => r.user_id)).toContain(target.user_id);
      expect(await expectAgWindow(page, records, table, { sortModel: [], filterModel: {}, quickFilter: search })).toBe(expected.length);
      await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10, q: search });
      expect(pageErrors).toEqual([]);
    },
    TEST_MS,
  );

  test(
    "each client's Export CSV downloads its view: every column (no email), the rows in the view's order",
    async () => {
      const { page, service, pageErrors } = session();
      const { records, table } = service;
      await openDemoPage(page, `${service.server.url}/`);
      const download = async (selector: string) => {
        const [file] = await Promise.all([page.waitForEvent("download"), page.click(selector)]);
        return { name: file.suggestedFilename(), rows: csvRows(readFileSync(await file.path(), "utf8")) };
      };
      // TanStack: status "suspended", sorted by signed_up descending (two clicks on a date column)
      await tsFilter(page, "status").selectOption("suspended");
      await tsHeader(page, "signed_up").click();
      await tsHeader(page, "signed_up").click();
      await expectTanstackPage(page, records, table, { pageIndex: 0, pageSize: 10, sort: { id: "signed_up", desc: true }, filters: { status: "suspended" } });
      const ts = await download("#ts-export");
      const tsView = oracleRows(records, table, { sortModel: [{ colId: "signed_up", sort: "desc" }], filterModel: { status: { filterType: "set", values: ["suspended"] } } });
      expect(ts.name).toMatch(/^users-[0-9a-f]{16}\.csv$/);
      expect(ts.rows[0]).toEqual(table.specs.map((c) => c.id));
      expect(ts.rows.slice(1).map((r) => r[0])).toEqual(tsView.map((r) => r.user_id as string));
      // AG Grid: logins above 500, sorted by last_seen ascending
      const model = { logins: { filterType: "number", type: "greaterThan", filter: 500 } };
      await page.evaluate((m) => window.gridApi.setFilterModel(m), model);
      await page.evaluate(() => window.gridApi.ensureColumnVisible("last_seen"));
      await agHeader(page, "last_seen").click();
      const agBody = { sortModel: [{ colId: "last_seen", sort: "asc" as const }], filterModel: model };
      await expectAgWindow(page, records, table, agBody);
      const ag = await download("#ag-export");
      expect(ag.rows[0]).toEqual(table.specs.map((c) => c.id));
      expect(ag.rows.slice(1).map((r) => r[0])).toEqual(oracleRows(records, table, agBody).map((r) => r.user_id as string));
      expect(await page.textContent("#ag-export-status")).toMatch(/^saved \d+ KiB$/);
      expect(pageErrors).toEqual([]);
    },
    TEST_MS,
  );
});
