/**
 * End to end: the demo page with access control on (docs/api.md "Access control"). Without a
 * credential the page loads nothing and says why; with a tenant's JWT typed into the
 * Authorization field, both clients show exactly the tenant's rows and the role's columns (the
 * naive oracle over the role's rows, cut to its columns), the search finds nothing through a
 * column the role does not see, the export holds the role's columns; a token of a role the
 * policy does not know is refused with the server's reason.
 *
 * Needs /usr/bin/chromium: `sh scripts/install-chromium.sh` (as root).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { USER_COLUMN_SPECS } from "../../src/generate/record.ts";
import { generateUsers } from "../../src/generate/users.ts";
import type { Table, TableRecord } from "../support/table-oracle.ts";
import { expectAgWindow, expectTanstackPage, openDemoPage } from "./support/demo-page.ts";
import { type DemoSession, openDemoSession, startTableDemoService } from "./support/fixture.ts";

const TEST_MS = 120_000;
const SECRET = "demo-e2e-secret-that-is-long-enough-4f1c9a";

/** Generated users with the organisation each belongs to (five of them) and a salary. */
const TABLE: Table = {
  specs: [...USER_COLUMN_SPECS, { id: "org_id", kind: "number" }, { id: "salary", kind: "number" }],
  key: "id",
};
const RECORDS: TableRecord[] = [...generateUsers({ count: 1500, seed: 12 })].map((u, i) => ({ ...u, org_id: (i % 5) + 1, salary: 30_000 + ((i * 7919) % 50_000) }));

/** The support role: org 3's rows, without email or salary. */
const SUPPORT_COLUMNS = ["id", "name", "status", "org_id"];
const ORG = 3;
const ROLE_TABLE: Table = { specs: TABLE.specs.filter((s) => SUPPORT_COLUMNS.includes(s.id)), key: "id" };
const ROLE_RECORDS: TableRecord[] = RECORDS.filter((r) => r.org_id === ORG).map((r) => Object.fromEntries(SUPPORT_COLUMNS.map((c) => [c, r[c]])));

let policyDir: string;
let session: DemoSession;

beforeAll(async () => {
  policyDir = mkdtempSync(join(tmpdir(), "demo-token-"));
  const policy = join(policyDir, "policy.json");
  writeFileSync(
    policy,
    JSON.stringify({
      jwt: { secret: SECRET },
      roles: {
        admin: { columns: "*" },
        support: { columns: SUPPORT_COLUMNS, filterModel: { org_id: { filterType: "number", type: "equals", filter: { claim: "org_id" } } } },
      },
    }),
  );
  session = await openDemoSession(startTableDemoService(RECORDS, TABLE, { access: policy }));
}, TEST_MS);

afterAll(async () => {
  await session?.close();
  rmSync(policyDir, { recursive: true, force: true });
});

/** A JWT of `claims`, signed with the policy's secret, valid for an hour. */
function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h").sign(new TextEncoder().encode(SECRET));
}

/** Types `value` into the Authorization field and submits it, which reloads the page. */
async function useCredential(value: string): Promise<void> {
  const page = session.page;
  await page.fill("#auth-token", value);
  await Promise.all([page.waitForEvent("load"), page.press("#auth-token", "Enter")]);
}

/** Waits until both status lines report a failure to load the schema, and returns their text. */
async function refusal(): Promise<{ ag: string | null; ts: string | null }> {
  const page = session.page;
  await page.waitForFunction(() => document.getElementById("ag-status")?.classList.contains("error") && document.getElementById("ts-url")?.classList.contains("error"), null);
  return { ag: await page.textContent("#ag-status"), ts: await page.textContent("#ts-url") };
}

describe("the demo page with a tenant's token", () => {
  test(
    "no credential: refused; a support token of org 3: its rows and columns in both clients, no search through email, an export of its columns; an unknown role: refused with the reason",
    async () => {
      const page = session.page;
      const url = `${session.service.server.url}/`;
      await page.goto(url);
      expect((await refusal()).ag).toContain("HTTP 401");

      await useCredential(await token({ role: "support", org_id: ORG }));
      await openDemoPage(page, page.url());
      expect(await page.evaluate(() => window.demoSchema?.columns.map((c) => c.id))).toEqual(SUPPORT_COLUMNS);
      expect(await page.evaluate(() => window.demoSchema?.rows)).toBe(ROLE_RECORDS.length);
      const gridColumns = await page.$$eval(".ag-header-row-column .ag-header-cell[col-id]", (cells) => cells.map((c) => c.getAttribute("col-id")));
      expect(gridColumns.length).toBeGreaterThan(0);
      expect(gridColumns.filter((c) => !SUPPORT_COLUMNS.includes(c as string))).toEqual([]);
      expect(await page.$$eval("#ts-thead th[data-column]", (cells) => cells.map((c) => c.getAttribute("data-column")))).toEqual(SUPPORT_COLUMNS);
      await expectAgWindow(page, ROLE_RECORDS, ROLE_TABLE, { sortModel: [], filterModel: {} });
      await expectTanstackPage(page, ROLE_RECORDS, ROLE_TABLE, { pageIndex: 0, pageSize: 10 });

      // "hotmail" is in e-mail addresses alone: the role does not see them, so nothing matches
      expect(RECORDS.some((r) => r.org_id === ORG && String(r.email).includes("hotmail"))).toBe(true);
      await page.fill("#search", "hotmail");
      await expectTanstackPage(page, ROLE_RECORDS, ROLE_TABLE, { pageIndex: 0, pageSize: 10, q: "hotmail" });
      expect(await expectAgWindow(page, ROLE_RECORDS, ROLE_TABLE, { sortModel: [], filterModel: {}, quickFilter: "hotmail" })).toBe(0);
      await page.fill("#search", "");
      await expectTanstackPage(page, ROLE_RECORDS, ROLE_TABLE, { pageIndex: 0, pageSize: 10 });

      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#ts-export")]);
      const csv = readFileSync(await download.path(), "utf8").split("\r\n");
      expect(csv[0]).toBe(SUPPORT_COLUMNS.join(","));
      expect(csv.length - 2).toBe(ROLE_RECORDS.length);

      await useCredential(await token({ role: "intern" }));
      const refused = await refusal();
      expect(refused.ag).toContain('HTTP 403: the token\'s role "intern" is not one of the access policy\'s');
      expect(await page.evaluate(() => document.getElementById("auth-form")?.classList.contains("refused"))).toBe(true);
      expect(session.pageErrors.filter((e) => !e.includes("status of 401") && !e.includes("status of 403"))).toEqual([]);
    },
    TEST_MS,
  );
});
