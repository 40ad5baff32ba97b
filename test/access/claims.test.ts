/**
 * Claim values (docs/api.md "Access control", claims): each kind's conversion of a claim
 * (src/kinds, `claimValue`) against the rule written out here, the refusals naming the claim
 * (src/access/claims.ts `convertClaims`), and the view cache keyed by the converted values
 * (src/access/view.ts): credentials whose claims convert differently never share a view, those
 * whose claims convert alike do, and a refused claim is never looked up. Over HTTP with real
 * JWTs: test/http/access-claims.test.ts.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { convertClaims, findClaims } from "../../src/access/claims.ts";
import { parsePolicy } from "../../src/access/policy.ts";
import { type RoleView, ViewCache, claimValuesOf } from "../../src/access/view.ts";
import { KINDS } from "../../src/kinds/registry.ts";
import type { ColumnSpec, Schema } from "../../src/schema/kinds.ts";

const SCHEMA: Schema = {
  columns: [
    { id: "id", kind: "number" },
    { id: "name", kind: "text" },
    { id: "status", kind: "enum", values: ["active", "inactive"] },
    { id: "org_id", kind: "number" },
    { id: "verified", kind: "boolean" },
    { id: "born", kind: "date" },
    { id: "seen", kind: "datetime" },
    { id: "prefs", kind: "json" },
  ],
  key: "id",
  partition: "status",
};

const spec = (id: string) => SCHEMA.columns.find((c) => c.id === id) as ColumnSpec;

/** The claim rule of a number column, written out: a finite number (−0 as 0), or a string of a decimal number whose value is finite. */
function numberRule(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value + 0 : null;
  if (typeof value !== "string") return null;
  const t = value.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  const x = Number(t);
  // a value that is not zero but reads as 0 (an underflow) is refused like an overflow
  if (!Number.isFinite(x) || (x === 0 && /[1-9]/.test(t.replace(/[eE].*$/, "")))) return null;
  return x + 0;
}

/** Any claim value a JSON payload can hold, ±Infinity (JSON's `1e999`) among them, and numeric strings. */
const claimArb = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, null, "", " 7 ", "7", "-7.5e2", "1e999", "1e-999", "0e5", "true", "FALSE", "2024-03-01"),
  fc.double(),
  fc.integer().map(String),
);

describe("each kind's conversion of a claim", () => {
  test("number: finite numbers and numeric strings, as numbers; anything else refused", () => {
    fc.assert(
      fc.property(claimArb, (value) => {
        expect(KINDS.number.claimValue(spec("org_id"), value)).toBe(numberRule(value));
      }),
      { numRuns: 2000 },
    );
    expect(KINDS.number.claimValue(spec("org_id"), " 7 ")).toBe(7);
    expect(Object.is(KINDS.number.claimValue(spec("org_id"), -0), 0)).toBe(true);
    expect(KINDS.number.claimValue(spec("org_id"), Number.POSITIVE_INFINITY)).toBeNull();
    expect(KINDS.number.claimValue(spec("org_id"), "1e999")).toBeNull();
  });

  test("text, enum, date, datetime: strings as they are; boolean: true or false, from booleans or the words; json: nothing", () => {
    fc.assert(
      fc.property(claimArb, (value) => {
        for (const id of ["name", "status", "born", "seen"]) expect(KINDS[spec(id).kind].claimValue(spec(id), value)).toBe(typeof value === "string" ? value : null);
        const b = KINDS.boolean.claimValue(spec("verified"), value);
        const expected = typeof value === "boolean" ? String(value) : typeof value === "string" && /^(true|false)$/i.test(value) ? value.toLowerCase() : null;
        expect(b).toBe(expected);
        expect(KINDS.json.claimValue(spec("prefs"), value)).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  test("every kind's example is a value its conversion takes as it is (the stand-in a policy is checked with)", () => {
    for (const c of SCHEMA.columns) {
      if (c.kind === "json") continue;
      const example = KINDS[c.kind].example(c);
      expect({ kind: c.kind, value: KINDS[c.kind].claimValue(c, example) }).toEqual({ kind: c.kind, value: example });
    }
  });
});

describe("a role's claims converted", () => {
  const model = {
    org_id: { filterType: "number", type: "equals", filter: { claim: "org" } },
    status: { filterType: "set", values: { claim: "states" } },
    name: { filterType: "text", type: "contains", filter: { claim: "org" } },
  };
  const refs = findClaims(model).refs;

  test("one value per reference, converted by its column's kind (one claim, two kinds); a whole list from a list or a scalar", () => {
    expect(convertClaims(refs, { org: "7", states: ["active", "inactive"] }, SCHEMA)).toEqual([7, ["active", "inactive"], "7"]);
    expect(convertClaims(refs, { org: "-0", states: "active" }, SCHEMA)).toEqual([0, ["active"], "-0"]);
    expect(convertClaims(refs, { org: "7", states: [] }, SCHEMA)).toEqual([7, [], "7"]);
  });

  test("refusals name the claim, the column and what it must be", () => {
    const cases: [Record<string, unknown>, unknown][] = [
      [{ states: "active" }, { reason: "missing_claim", claim: "org", detail: 'the claim "org" is absent or null' }],
      [{ org: null, states: "active" }, { reason: "missing_claim", claim: "org", detail: 'the claim "org" is absent or null' }],
      [{ org: Number.POSITIVE_INFINITY, states: "active" }, { reason: "invalid_claim", claim: "org", detail: 'the claim "org" must be a finite number or a numeric string for column "org_id" (number), not a number beyond the range of a double' }],
      [{ org: { a: 1 }, states: "active" }, { reason: "invalid_claim", claim: "org", detail: 'the claim "org" must be a finite number or a numeric string for column "org_id" (number), not an object' }],
      [{ org: 7, states: ["active", null] }, { reason: "invalid_claim", claim: "states", detail: 'the claim "states" must be a string (one of the column\'s values) for column "status" (enum), not null' }],
      [{ org: 7, states: "active" }, { reason: "invalid_claim", claim: "org", detail: 'the claim "org" must be a string for column "name" (text), not 7' }],
    ];
    for (const [claims, expected] of cases) expect(convertClaims(refs, claims, SCHEMA)).toEqual(expected as never);
  });
});

describe("the view cache, keyed by the converted values", () => {
  const policy = parsePolicy(
    JSON.stringify({
      jwt: { secret: "s".repeat(40) },
      roles: {
        tenant: { columns: ["id", "org_id"], filterModel: { org_id: { filterType: "text", type: "equals", filter: { claim: "org" } } } },
        orgs: { columns: ["id", "org_id"], filterModel: { org_id: { filterType: "set", values: { claim: "orgs" } } } },
      },
    }),
    "policy.json",
    SCHEMA,
    { dir: "." },
  );
  const tenant = policy.roles.get("tenant");
  const orgs = policy.roles.get("orgs");
  if (tenant === undefined || orgs === undefined) throw new Error("the roles were not kept");

  test("±Infinity, null and a missing claim are refused before the cache is read, whatever it held", () => {
    const cache = new ViewCache(policy.id);
    const refusals = [{ org: Number.POSITIVE_INFINITY }, {}, { org: null }, { org: Number.NEGATIVE_INFINITY }, {}].map((claims) => cache.viewOf(tenant, claims, SCHEMA));
    expect(refusals.map((r) => (r as { reason: string }).reason)).toEqual(["invalid_claim", "missing_claim", "missing_claim", "invalid_claim", "missing_claim"]);
    expect(cache.size).toBe(0);
  });

  test("claims that convert alike share one view (and its tag); any other value is another view", () => {
    const cache = new ViewCache(policy.id);
    const seven = cache.viewOf(tenant, { org: 7 }, SCHEMA) as RoleView;
    expect(cache.viewOf(tenant, { org: "7" }, SCHEMA)).toBe(seven);
    expect(cache.viewOf(tenant, { org: " 7.0 " }, SCHEMA)).toBe(seven);
    const eight = cache.viewOf(tenant, { org: 8 }, SCHEMA) as RoleView;
    expect(eight).not.toBe(seven);
    expect(eight.tag).not.toBe(seven.tag);
    expect(cache.viewOf(orgs, { orgs: [7, 8] }, SCHEMA)).not.toBe(cache.viewOf(orgs, { orgs: [7] }, SCHEMA));
    expect(cache.viewOf(orgs, { orgs: 7 }, SCHEMA)).toBe(cache.viewOf(orgs, { orgs: ["7"] }, SCHEMA));
  });

  test("two credentials share a view exactly when their claims convert to the same values", () => {
    fc.assert(
      fc.property(claimArb, claimArb, (a, b) => {
        const cache = new ViewCache(policy.id);
        const x = cache.viewOf(tenant, { org: a }, SCHEMA);
        const y = cache.viewOf(tenant, { org: b }, SCHEMA);
        const ca = numberRule(a);
        const cb = numberRule(b);
        // refused values get no view; accepted ones share exactly when equal
        expect("reason" in x).toBe(ca === null);
        expect("reason" in y).toBe(cb === null);
        if (ca !== null && cb !== null) expect(x === y).toBe(ca === cb);
        expect(claimValuesOf(tenant, { org: a }, SCHEMA)).toEqual(ca === null ? (x as never) : [ca]);
      }),
      { numRuns: 1000 },
    );
  });
});
