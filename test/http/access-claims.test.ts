/**
 * The claim rules of access control over a real socket, with real JWTs (docs/api.md "Access
 * control": credentials, claims in a filter). A claim a role's filter reads must be what its
 * column's kind takes — a finite number for a number column (a numeric string converted), a
 * string for a text column, a list of such values only for a whole `values` list — and anything
 * else is a 403 naming the claim: `1e999` and `-1e999` (which JSON reads as ±Infinity), null, an
 * object, a list where one value goes, a list holding null, a non-numeric string for a number
 * column, a number for a text column. Credentials whose claims differ never share a view: a token
 * without the claim, or with null, after one with `1e999` is still a 403 (the view cache is keyed
 * by the converted values), while `7` and `"7"` share one (and its entity tag). `exp`, `nbf` and
 * `iat` must be finite and within 100 years of now, else 401.
 *
 * The tokens are signed over their payload's exact text (jose `CompactSign`), so that a payload can
 * hold what `JSON.stringify` never writes (`1e999`) and what an identity provider might.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompactSign } from "jose";
import pino from "pino";
import { type RunningServer, startServer } from "../../src/server.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import type { Table } from "../support/table-oracle.ts";
import { buildTableStore } from "../support/table-store.ts";

const TABLE: Table = {
  specs: [
    { id: "id", kind: "number" },
    { id: "name", kind: "text" },
    { id: "org_id", kind: "number" },
    { id: "team", kind: "text" },
  ],
  key: "id",
};
/** 30 rows: org 1, 2 or 3 (every tenth row none), team "red" or "blue" (every seventh none). */
const RECORDS = Array.from({ length: 30 }, (_, i) => ({
  id: i + 1,
  name: `Person ${i + 1}`,
  org_id: i % 10 === 9 ? null : (i % 3) + 1,
  team: i % 7 === 6 ? null : i % 2 === 0 ? "red" : "blue",
}));

const SECRET = "a-secret-for-the-claims-test-0123456789abcdef";
const NOW = () => Math.floor(Date.now() / 1000);

/** Roles whose filters read claims: a number filter, a text filter on a number column, a text column's, a whole set list. */
const POLICY = {
  jwt: { secret: SECRET, algorithms: ["HS256"] },
  roles: {
    num: { columns: ["id", "name", "org_id"], filterModel: { org_id: { filterType: "number", type: "equals", filter: { claim: "org" } } } },
    numtext: { columns: ["id", "name", "org_id"], filterModel: { org_id: { filterType: "text", type: "equals", filter: { claim: "org" } } } },
    team: { columns: ["id", "team"], filterModel: { team: { filterType: "text", type: "equals", filter: { claim: "team" } } } },
    orgs: { columns: ["id", "org_id"], filterModel: { org_id: { filterType: "set", values: { claim: "orgs" } } } },
  },
};

let dir: string;
let snapshot: string;
let policyFile: string;
/** The server of the tests that share one (their views may be cached across tests: that is part of what they check). */
let shared: RunningServer;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "access-claims-"));
  snapshot = join(dir, "users.snap");
  writeSnapshot(snapshot, buildTableStore(RECORDS, TABLE));
  policyFile = join(dir, "policy.json");
  writeFileSync(policyFile, JSON.stringify(POLICY));
  shared = serve("shared");
});

afterAll(async () => {
  await shared?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A server with an empty view cache. */
function serve(name: string): RunningServer {
  return startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 100, logger: pino({ level: "silent" }), access: policyFile, cacheDir: join(dir, `cache-${name}`) });
}

/**
 * A token signed over exactly `members` (JSON member text, e.g. `"org": 1e999`), with a role and,
 * unless the members give their own, `exp` an hour from now.
 */
function token(role: string, members: string): Promise<string> {
  const exp = members.includes('"exp"') ? "" : `, "exp": ${NOW() + 3600}`;
  const payload = `{"role": ${JSON.stringify(role)}${members === "" ? "" : `, ${members}`}${exp}}`;
  return new CompactSign(new TextEncoder().encode(payload)).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(new TextEncoder().encode(SECRET));
}

/** GET `path` from `server` with a token of `role` holding `members`: status, the problem's detail or the rows' ids, the entity tag, the challenge. */
async function call(role: string, members: string, server: RunningServer = shared, path = "/api/users?pageSize=100&sortBy=id") {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${await token(role, members)}` } });
  const body = (await response.json()) as { detail?: string; data?: { id: number }[] };
  return { status: response.status, detail: body.detail ?? null, ids: body.data?.map((r) => r.id) ?? null, etag: response.headers.get("etag"), challenge: response.headers.get("www-authenticate") };
}

/** The ids of the rows of org `org`, ascending. */
const idsOfOrg = (org: number) => RECORDS.filter((r) => r.org_id === org).map((r) => r.id);

/** The 403 detail of a claim the role's column cannot take. */
const invalid = (role: string, claim: string, form: string, column: string, kind: string, got: string) =>
  `the credential's claims do not fit role "${role}"'s filter: the claim "${claim}" must be ${form} for column "${column}" (${kind}), not ${got}`;

const NUMBER_FORM = "a finite number or a numeric string";
const BEYOND = "a number beyond the range of a double";

/** Each refused claim: what it is, the role, the payload's members, the 403's detail. */
const REFUSED: [string, string, string, string][] = [
  ["1e999 in a text filter on a number column", "numtext", '"org": 1e999', invalid("numtext", "org", NUMBER_FORM, "org_id", "number", BEYOND)],
  ["-1e999 in a text filter on a number column", "numtext", '"org": -1e999', invalid("numtext", "org", NUMBER_FORM, "org_id", "number", BEYOND)],
  ["1e999 in a number filter", "num", '"org": 1e999', invalid("num", "org", NUMBER_FORM, "org_id", "number", BEYOND)],
  ["an object", "num", '"org": {"$gt": 0}', invalid("num", "org", NUMBER_FORM, "org_id", "number", "an object")],
  ["a list where one value goes", "num", '"org": [1, 2]', invalid("num", "org", NUMBER_FORM, "org_id", "number", "a list")],
  ["a non-numeric string for a number column", "num", '"org": "seven"', invalid("num", "org", NUMBER_FORM, "org_id", "number", '"seven"')],
  ["a boolean for a number column", "num", '"org": true', invalid("num", "org", NUMBER_FORM, "org_id", "number", "true")],
  ["a number for a text column", "team", '"team": 7', invalid("team", "team", "a string", "team", "text", "7")],
  ["an object for a text column", "team", '"team": {"toString": "red"}', invalid("team", "team", "a string", "team", "text", "an object")],
  ["a list holding null, for a whole set list (null would add the rows of no org)", "orgs", '"orgs": [1, null]', invalid("orgs", "orgs", NUMBER_FORM, "org_id", "number", "null")],
  ["a list holding a list, for a whole set list", "orgs", '"orgs": [1, [2]]', invalid("orgs", "orgs", NUMBER_FORM, "org_id", "number", "a list")],
  ["a list holding 1e999, for a whole set list", "orgs", '"orgs": [1, 1e999]', invalid("orgs", "orgs", NUMBER_FORM, "org_id", "number", BEYOND)],
];

describe("a claim's value must be what its column's kind takes, else a 403 naming the claim", () => {
  for (const [what, role, members, detail] of REFUSED) {
    test(what, async () => {
      const r = await call(role, members);
      expect({ status: r.status, detail: r.detail }).toEqual({ status: 403, detail });
    });
  }

  // Each on a server of its own: the value first asked for is what the view cache holds.
  for (const [first, then, what] of [
    ['"org": 1e999', "", "no claim"],
    ['"org": 1e999', '"org": null', "null"],
    ['"org": -1e999', "", "no claim"],
  ] as const) {
    test(`${what} after ${first}: a 403 (the views of ±Infinity, null and a missing claim never collide)`, async () => {
      const server = serve(`collide-${first}-${what}`);
      try {
        await call("numtext", first, server);
        const r = await call("numtext", then, server);
        expect({ status: r.status, detail: r.detail }).toEqual({ status: 403, detail: 'role "numtext" needs the claim "org", which the credential lacks' });
        // and a good one still sees its rows
        expect((await call("numtext", '"org": 2', server)).ids).toEqual(idsOfOrg(2));
      } finally {
        await server.stop();
      }
    });
  }

  test('a numeric string converts for a number column: "2", " 2.0 " and 2 see the same rows and share the view and its entity tag; another value is another view', async () => {
    const asNumber = await call("num", '"org": 2');
    expect(asNumber.ids).toEqual(idsOfOrg(2));
    for (const spelled of ['"org": "2"', '"org": " 2.0 "', '"org": "2e0"', '"org": 2.0']) {
      const r = await call("num", spelled);
      expect({ spelled, status: r.status, ids: r.ids, etag: r.etag }).toEqual({ spelled, status: 200, ids: idsOfOrg(2), etag: asNumber.etag });
    }
    const other = await call("num", '"org": "3"');
    expect(other.ids).toEqual(idsOfOrg(3));
    expect(other.etag).not.toBe(asNumber.etag);
  });

  test("good claims see their rows: a whole set list of numbers and numeric strings, a text column's string", async () => {
    expect((await call("orgs", '"orgs": [1, "3"]')).ids).toEqual(RECORDS.filter((r) => r.org_id === 1 || r.org_id === 3).map((r) => r.id));
    expect((await call("orgs", '"orgs": 2')).ids).toEqual(idsOfOrg(2));
    expect((await call("orgs", '"orgs": []')).ids).toEqual([]);
    expect((await call("team", '"team": "red"')).ids).toEqual(RECORDS.filter((r) => r.team === "red").map((r) => r.id));
  });
});

describe("exp, nbf and iat: finite numbers within 100 years of now, else 401", () => {
  const century = 101 * 365.25 * 86_400;
  const cases: [string, () => string, string][] = [
    ["exp 1e999 (never expiring)", () => '"org": 2, "exp": 1e999', "its exp is not a finite number of seconds"],
    ["exp 101 years on", () => `"org": 2, "exp": ${Math.round(NOW() + century)}`, "its exp is more than 100 years from now"],
    ["nbf -1e999", () => '"org": 2, "nbf": -1e999', "its nbf is not a finite number of seconds"],
    ["nbf 101 years ago", () => `"org": 2, "nbf": ${Math.round(NOW() - century)}`, "its nbf is more than 100 years from now"],
    ["iat 1e999", () => '"org": 2, "iat": 1e999', "its iat is not a finite number of seconds"],
    ["iat -1e999", () => '"org": 2, "iat": -1e999', "its iat is not a finite number of seconds"],
    ["iat 101 years ago", () => `"org": 2, "iat": ${Math.round(NOW() - century)}`, "its iat is more than 100 years from now"],
  ];
  for (const [what, members, reason] of cases) {
    test(what, async () => {
      const r = await call("num", members());
      expect({ status: r.status, detail: r.detail, challenge: r.challenge }).toEqual({ status: 401, detail: `the token is not valid: ${reason}`, challenge: 'Bearer error="invalid_token"' });
    });
  }

  test("ordinary times pass: iat and nbf a minute ago, exp 99 years on", async () => {
    const r = await call("num", `"org": 2, "iat": ${NOW() - 60}, "nbf": ${NOW() - 60}, "exp": ${NOW() + 99 * 365 * 86_400}`);
    expect({ status: r.status, ids: r.ids }).toEqual({ status: 200, ids: idsOfOrg(2) });
  });
});
