/**
 * Explain for a role that sees some rows or columns (docs/api.md "Access control"): its plan
 * is its window alone, without estimates, stored index or the path taken, so that it tells
 * nothing of rows or columns outside its view: a search for a hidden column's exact value
 * explains as a search for a word no row holds; two tables that differ only in other tenants'
 * rows (more of them, other values) explain alike, with and without analyze (times aside); the
 * difference of two filters' estimates is no longer an oracle of another tenant's row count.
 * A role of every row and column still gets the whole plan. Through the data routes' handlers
 * with the role's grant (credentials and the envelope: test/http/access.test.ts).
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import type { Grant } from "../../src/access/control.ts";
import { parsePolicy } from "../../src/access/policy.ts";
import { type RoleView, compileView } from "../../src/access/view.ts";
import { type Engine, createEngine } from "../../src/engine/execute.ts";
import { dataHandlers } from "../../src/http/app.ts";
import { buildTableStore } from "../support/table-store.ts";
import type { Table } from "../support/table-oracle.ts";

const logger = pino({ level: "silent" });

const TABLE: Table = {
  specs: [
    { id: "id", kind: "number" },
    { id: "name", kind: "text" },
    { id: "email", kind: "text" },
    { id: "status", kind: "enum", values: ["active", "inactive"] },
    { id: "org_id", kind: "number" },
  ],
  key: "id",
};

/** `n` rows of org `org` from id `from`; `salt` changes their names and e-mails. */
function orgRows(org: number, from: number, n: number, salt = "") {
  return Array.from({ length: n }, (_, i) => ({ id: from + i, name: `Person ${salt}${from + i}`, email: `p${salt}${from + i}@org${org}.example`, status: i % 4 === 0 ? "inactive" : "active", org_id: org }));
}

function engineOf(records: object[]): Engine {
  return createEngine(buildTableStore(records, TABLE));
}

function grantOf(engine: Engine, role: Record<string, unknown>, claims: Record<string, unknown>): Grant {
  const policy = parsePolicy(JSON.stringify({ jwt: { secret: "s".repeat(40) }, roles: { r: role } }), "policy.json", engine.store.schema, { dir: "." });
  const spec = policy.roles.get("r");
  if (spec === undefined) throw new Error("no role");
  const view = compileView(spec, claims, engine.store.schema, policy.id);
  if ("reason" in view) throw new Error(view.detail);
  return { principal: { role: spec, claims }, view: view as RoleView };
}

const TENANT = { columns: ["id", "name", "status", "org_id"], filterModel: { org_id: { filterType: "number", type: "equals", filter: { claim: "org_id" } } } };
/** Sees every row, not the e-mails. */
const NO_EMAIL = { columns: ["id", "name", "status", "org_id"] };

/** An explain answer with its times taken out (the rule sets them aside). */
async function explained(engine: Engine, grant: Grant, request: Request): Promise<{ status: number; body: unknown; etag: string | null }> {
  const response = await (request.method === "GET" ? dataHandlers({ engine: () => engine, maxPageSize: 100, logger }).explainGet(request, grant) : dataHandlers({ engine: () => engine, maxPageSize: 100, logger }).explainPost(request, grant));
  const body = JSON.parse(await response.text(), (key, value) => (key === "ms" ? 0 : value));
  return { status: response.status, body, etag: response.headers.get("etag") };
}

const get = (query: string) => new Request(`http://x/api/users/explain?${query}`);
const post = (body: unknown) => new Request("http://x/api/users/explain", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("explain for a role that sees some rows or columns", () => {
  test("a search for a hidden column's exact value explains as one for a word no row holds", async () => {
    const engine = engineOf([...orgRows(1, 1, 50), ...orgRows(2, 100, 50)]);
    const grant = grantOf(engine, NO_EMAIL, {});
    for (const analyze of ["false", "true"]) {
      const hidden = await explained(engine, grant, get(`q=p17@org1.example&analyze=${analyze}`));
      const absent = await explained(engine, grant, get(`q=qqqzzzxxx&analyze=${analyze}`));
      expect(hidden.status).toBe(200);
      expect((hidden.body as { plan: unknown }).plan).toEqual((absent.body as { plan: unknown }).plan);
      expect((hidden.body as { plan: unknown }).plan).toEqual({ op: "window", column: "id", detail: "rows 0..10 by id asc", ...(analyze === "true" ? { rows: 0, ms: 0 } : {}) });
    }
    // the admin's plan is the whole tree, with its estimates
    const admin = await explained(engine, grantOf(engine, { columns: "*" }, {}), get("q=p17@org1.example"));
    expect((admin.body as { plan: { estimatedRows: number; children: unknown[] } }).plan.children.length).toBeGreaterThan(0);
  });

  test("the difference of two filters' plans tells nothing of another tenant's rows; tables differing only there explain alike", async () => {
    const small = engineOf([...orgRows(1, 1, 20), ...orgRows(2, 100, 20)]);
    // org 1's rows the same; org 2's many more, other names, and an org 3 and 4
    const large = engineOf([...orgRows(1, 1, 20), ...orgRows(2, 100, 400, "x"), ...orgRows(3, 1000, 300), ...orgRows(4, 2000, 5)]);
    const requests = () => [
      post({ startRow: 0, endRow: 10, sortModel: [{ colId: "name", sort: "asc" }], filterModel: { org_id: { filterType: "number", type: "greaterThanOrEqual", filter: 3 } } }),
      post({ startRow: 0, endRow: 10, sortModel: [{ colId: "name", sort: "asc" }], filterModel: { org_id: { filterType: "number", type: "greaterThanOrEqual", filter: 4 } } }),
      post({ startRow: 5, endRow: 25, sortModel: [{ colId: "name", sort: "desc" }], analyze: true }),
      post({ startRow: 0, endRow: 10, filterModel: { name: { filterType: "text", type: "contains", filter: "x1" } }, analyze: true }),
      get("sortBy=status&pageSize=7&q=person"),
      get("sortBy=name&pageSize=7&q=person&analyze=true"),
    ];
    const smallGrant = grantOf(small, TENANT, { org_id: 1 });
    const largeGrant = grantOf(large, TENANT, { org_id: 1 });
    const a = await Promise.all(requests().map((r) => explained(small, smallGrant, r)));
    const b = await Promise.all(requests().map((r) => explained(large, largeGrant, r)));
    expect(a).toEqual(b);
    for (const answer of a) expect(JSON.stringify(answer.body)).not.toContain("estimated");
  });
});
