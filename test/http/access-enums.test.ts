/**
 * Enum value lists told to a role that sees some rows (docs/api.md "Access control"): a
 * declared enum's values as declared, an inferred one's values present in the role's rows alone,
 * in `/schema`, the OpenAPI document and a set filter's 400 body; two tables that differ only in
 * other tenants' rows give the role byte-identical answers, and the same request on a table
 * without the other tenants' value answers alike. A role of every row and column is told every
 * value. The requests go through the route table's handlers with the role's grant, as the
 * envelope hands it to them (the envelope and credentials: test/http/access.test.ts).
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import type { Grant } from "../../src/access/control.ts";
import { parsePolicy } from "../../src/access/policy.ts";
import { type RoleView, compileView } from "../../src/access/view.ts";
import { type Engine, applyChanges, createEngine } from "../../src/engine/execute.ts";
import { OPENAPI_JSON, dataHandlers, routeTable } from "../../src/http/app.ts";
import { tableOfObjects } from "../../src/snapshot/objects.ts";
import { buildStore } from "../../src/store/build.ts";

const logger = pino({ level: "silent" });

/** `plan` is inferred (no schema declares it); `tier` is declared, with a value no row holds. */
function engineOf(records: Record<string, unknown>[]): Engine {
  return createEngine(buildStore(tableOfObjects(records, { key: "id", columns: [{ id: "id", kind: "number" }, { id: "org", kind: "number" }, { id: "tier", kind: "enum", values: ["gold", "silver", "bronze"] }] })));
}

/** Org 1's rows: plans basic and pro, tier gold. */
const ORG1 = Array.from({ length: 40 }, (_, i) => ({ id: i + 1, org: 1, tier: "gold", plan: i % 2 === 0 ? "basic" : "pro" }));
/** Org 2's rows, one of them alone on plan enterprise. */
const ORG2 = Array.from({ length: 30 }, (_, i) => ({ id: 100 + i, org: 2, tier: "silver", plan: i === 0 ? "enterprise" : "basic" }));
/** Org 2's rows without enterprise. */
const ORG2_PLAIN = ORG2.map((r) => ({ ...r, plan: "basic" }));

function grantOf(engine: Engine, role: { columns: "*" | string[]; filterModel: Record<string, unknown> }, claims: Record<string, unknown>): Grant {
  const text = JSON.stringify({ jwt: { secret: "s".repeat(40) }, roles: { r: role } });
  const policy = parsePolicy(text, "policy.json", engine.store.schema, { dir: "." });
  const spec = policy.roles.get("r");
  if (spec === undefined) throw new Error("no role");
  const view = compileView(spec, claims, engine.store.schema, policy.id);
  if ("reason" in view) throw new Error(view.detail);
  return { principal: { role: spec, claims }, view: view as RoleView };
}

const TENANT = { columns: "*" as const, filterModel: { org: { filterType: "number", type: "equals", filter: { claim: "org" } } } };
const ADMIN = { columns: "*" as const, filterModel: {} };

/** The answers a role gets on the routes that list enum values: /schema, OpenAPI, a set filter on a value of its rows and on another. */
async function answers(engine: Engine, grant: Grant) {
  const handlers = dataHandlers({ engine: () => engine, maxPageSize: 100, logger });
  const openapi = routeTable({ engine: () => engine, maxPageSize: 100, logger, access: null }).find((r) => r.path === OPENAPI_JSON);
  if (openapi === undefined) throw new Error("no OpenAPI route");
  const text = async (r: Response | Promise<Response>) => {
    const response = await r;
    return { status: response.status, body: await response.text(), etag: response.headers.get("etag") };
  };
  const post = (body: unknown) => new Request("http://x/api/users", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return {
    schema: await text(handlers.schema(new Request("http://x/api/users/schema"), grant)),
    openapi: await text(openapi.handler(new Request(`http://x${OPENAPI_JSON}`), grant)),
    enterprise: await text(handlers.post(post({ startRow: 0, endRow: 5, filterModel: { plan: { filterType: "set", values: ["enterprise"] } } }), grant)),
    enterpriseGet: await text(handlers.get(new Request("http://x/api/users?filter[plan]=enterprise"), grant)),
    pro: await text(handlers.post(post({ startRow: 0, endRow: 5, filterModel: { plan: { filterType: "set", values: ["pro"] } } }), grant)),
  };
}

describe("enum value lists of a role that sees some rows", () => {
  test("an inferred enum lists the values of the role's rows, a declared one its declared values; other tenants' values are never told", async () => {
    const engine = engineOf([...ORG1, ...ORG2]);
    expect(engine.store.schema.columns.find((c) => c.id === "plan")).toEqual({ id: "plan", kind: "enum", values: ["basic", "enterprise", "pro"], inferred: true });
    const tenant = await answers(engine, grantOf(engine, TENANT, { org: 1 }));
    expect(JSON.parse(tenant.schema.body)).toEqual({
      columns: [
        { id: "id", kind: "number" },
        { id: "org", kind: "number" },
        { id: "tier", kind: "enum", values: ["gold", "silver", "bronze"] },
        { id: "plan", kind: "enum", values: ["basic", "pro"] },
      ],
      key: "id",
      partition: null,
      rows: ORG1.length,
    });
    expect(tenant.openapi.body).not.toContain("enterprise");
    expect(tenant.openapi.body).toContain('"basic","pro"');
    expect(tenant.enterprise.status).toBe(400);
    expect(tenant.enterprise.body).not.toContain('enterprise",');
    expect(tenant.enterpriseGet.status).toBe(400);
    expect(tenant.pro.status).toBe(200);
    // the role of every row and column is told every value
    const admin = await answers(engine, grantOf(engine, ADMIN, {}));
    expect(JSON.parse(admin.schema.body).columns[3].values).toEqual(["basic", "enterprise", "pro"]);
    expect(admin.openapi.body).toContain("enterprise");
    expect(admin.enterprise.status).toBe(200);
  });

  test("a table whose other tenants' rows differ (one holds a value only they have) answers the role byte for byte alike", async () => {
    const withValue = engineOf([...ORG1, ...ORG2]);
    const without = engineOf([...ORG1, ...ORG2_PLAIN]);
    const one = await answers(withValue, grantOf(withValue, TENANT, { org: 1 }));
    const two = await answers(without, grantOf(without, TENANT, { org: 1 }));
    expect(one).toEqual(two);
    // and the other tenant's answers do differ (the value is theirs)
    const theirs = await answers(withValue, grantOf(withValue, TENANT, { org: 2 }));
    expect(JSON.parse(theirs.schema.body).columns[3].values).toEqual(["basic", "enterprise"]);
    expect(theirs.enterprise.status).toBe(200);
  });

  test("over a live replica: a value leaves the list when the last row of the role holding it goes, and another tenant's batch changes nothing", async () => {
    let engine = engineOf([...ORG1, ...ORG2]);
    const grant = grantOf(engine, TENANT, { org: 2 });
    const before = await answers(engine, grant);
    // org 1's rows change: org 2 is told the same
    engine = applyChanges(engine, { lsn: "0/100", commitTime: Date.now(), changes: [{ op: "upsert", record: { id: 1, org: 1, tier: "bronze", plan: "pro" } }, { op: "delete", key: 2 }] });
    expect(await answers(engine, grant)).toEqual(before);
    // org 2's one enterprise row moves to basic: the value is gone from its list
    engine = applyChanges(engine, { lsn: "0/200", commitTime: Date.now(), changes: [{ op: "upsert", record: { id: 100, org: 2, tier: "silver", plan: "basic" } }] });
    const after = await answers(engine, grant);
    const plan = (JSON.parse(after.schema.body).columns as { id: string; values?: string[] }[]).find((c) => c.id === "plan");
    expect(plan?.values).toEqual(["basic"]);
    expect(after.enterprise.status).toBe(400);
  });
});
