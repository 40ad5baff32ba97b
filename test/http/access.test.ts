/**
 * Access control over a real socket (docs/api.md "Access control"): every 401 (missing,
 * malformed, unknown key, bad signature, expired — verified now or kept from before —, not yet
 * valid, wrong issuer or audience, an algorithm the policy does not accept, no expiry, too long)
 * with `WWW-Authenticate: Bearer`; every 403 (unknown role, no role, a claim missing or not
 * fitting, the metrics read by a role that does not see everything); what each role sees on
 * every route; entity tags that never let a 304 cross roles, tenants or a policy reload; denials
 * counted by reason and logged at most once a second per reason; never a token, key or secret
 * in an answer or a log line; the OpenAPI document per role; JWKS keys (RS256, ES256); secret
 * rotation and a refused reload; a live replica's changed rows in each role's view, its tags
 * with the LSN; `--access` replacing API keys; and, as a process, the start-up
 * refusal of a bad policy with `file:line: reason` and SIGHUP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import pino from "pino";
import { PolicyError } from "../../src/access/policy.ts";
import type { Change, ChangeBatch } from "../../src/live/changes.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { ROOT, spawnServe } from "../support/serve-process.ts";
import { type Table, oraclePost } from "../support/table-oracle.ts";
import { buildTableStore } from "../support/table-store.ts";

const TABLE: Table = {
  specs: [
    { id: "id", kind: "number" },
    { id: "name", kind: "text" },
    { id: "email", kind: "text" },
    { id: "status", kind: "enum", values: ["active", "inactive"] },
    { id: "org_id", kind: "number" },
    { id: "salary", kind: "number" },
  ],
  key: "id",
};
const RECORDS = Array.from({ length: 60 }, (_, i) => ({
  id: i + 1,
  name: `Person ${i + 1}`,
  email: `p${i + 1}@org${(i % 3) + 1}.example`,
  status: i % 4 === 0 ? "inactive" : "active",
  org_id: (i % 3) + 1,
  salary: 1000 + 10 * i,
}));

const SECRET = "first-secret-that-is-long-enough-0123456789";
const NEXT_SECRET = "second-secret-that-is-long-enough-9876543210";
const ISSUER = "https://idp.test";
const AUDIENCE = "users-listing";
const ADMIN_KEY = "admin-key-5d2c8f";
const SUPPORT_KEY = "support-key-for-org-2-71aa";

/** The 1-based line of the first line of `text` holding `needle`. */
const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");

/** The policy: an admin key, a support key of org 2, JWTs of the IdP; admin, support (org's rows, no email or salary) and auditor (orgs by a list claim). */
function policyText(options: { secrets?: string[]; supportColumns?: string[] } = {}): string {
  return JSON.stringify(
    {
      jwt: { secret: options.secrets ?? SECRET, algorithms: ["HS256"], issuer: ISSUER, audience: AUDIENCE },
      roleClaim: "role",
      keys: [
        { sha256: sha256(ADMIN_KEY), role: "admin" },
        { sha256: sha256(SUPPORT_KEY), role: "support", claims: { org_id: 2 } },
      ],
      roles: {
        admin: { columns: "*" },
        support: {
          columns: options.supportColumns ?? ["id", "name", "status", "org_id"],
          filterModel: { org_id: { filterType: "number", type: "equals", filter: { claim: "org_id" } } },
        },
        auditor: { columns: ["id", "status", "org_id"], filterModel: { org_id: { filterType: "set", values: { claim: "orgs" } } } },
      },
    },
    null,
    2,
  );
}

/** A token signed with `secret` (the policy's by default), valid for an hour, with the policy's issuer and audience. */
async function token(claims: Record<string, unknown>, options: { secret?: string; alg?: string; exp?: string | number | null; nbf?: string; iss?: string; aud?: string } = {}): Promise<string> {
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? "HS256" })
    .setIssuedAt()
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE);
  if (options.exp !== null) jwt = jwt.setExpirationTime(options.exp ?? "1h");
  if (options.nbf !== undefined) jwt = jwt.setNotBefore(options.nbf);
  return await jwt.sign(new TextEncoder().encode(options.secret ?? SECRET));
}

/** A pino logger whose lines are kept, parsed. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const text: string[] = [];
  const stream = new Writable({
    write(bytes, _encoding, done) {
      for (const line of String(bytes).split("\n")) {
        if (line === "") continue;
        text.push(line);
        lines.push(JSON.parse(line));
      }
      done();
    },
  });
  return { lines, text, logger: pino({ level: "info" }, stream) };
}

let dir: string;
let snapshot: string;
let policyFile: string;
let server: RunningServer;
let logs: ReturnType<typeof capture>;
/** Every credential a test sends: none may appear in an answer or a log line. */
const secrets: string[] = [SECRET, NEXT_SECRET, ADMIN_KEY, SUPPORT_KEY];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "access-http-"));
  snapshot = join(dir, "users.snap");
  writeSnapshot(snapshot, buildTableStore(RECORDS, TABLE));
  policyFile = join(dir, "policy.json");
  writeFileSync(policyFile, policyText());
  logs = capture();
  server = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 100, logger: logs.logger, access: policyFile, cacheDir: join(dir, "cache") });
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A request to the server with `credential` as a Bearer token (none when null). */
async function call(path: string, credential: string | null, init: RequestInit & { headers?: Record<string, string>; base?: string } = {}) {
  const { base, ...rest } = init;
  const headers: Record<string, string> = { ...(rest.headers ?? {}) };
  if (credential !== null) headers.authorization = `Bearer ${credential}`;
  const response = await fetch(`${base ?? server.url}${path}`, { ...rest, headers });
  const text = await response.text();
  for (const s of secrets) expect(text.includes(s)).toBe(false);
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // CSV, NDJSON, the metrics, or no body
  }
  return { status: response.status, headers: response.headers, text, body };
}

const postJson = (body: unknown) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** Every keyed route, with a request that is valid for any role. */
const KEYED: [string, RequestInit][] = [
  ["/api/users?pageSize=5", {}],
  ["/api/users", postJson({ startRow: 0, endRow: 5 })],
  ["/api/users/schema", {}],
  ["/api/users/facets?columns=status", {}],
  ["/api/users/facets", postJson({ columns: ["status"] })],
  ["/api/users/export?format=csv", {}],
  ["/api/users/export", postJson({ format: "ndjson" })],
  ["/api/users/explain", {}],
  ["/api/users/explain", postJson({})],
  ["/api", {}],
  ["/metrics", {}],
  ["/api/users/nope", {}],
  ["/api/users/schema", { method: "DELETE" }],
];

describe("401: a missing, invalid or expired credential", () => {
  test("no credential, on every keyed route (a path no route serves too): 401 with WWW-Authenticate: Bearer; /healthz and /readyz stay open", async () => {
    for (const [path, init] of KEYED) {
      const r = await call(path, null, init as never);
      expect({ path, status: r.status, challenge: r.headers.get("www-authenticate"), type: r.headers.get("content-type") }).toEqual({ path, status: 401, challenge: "Bearer", type: "application/problem+json" });
      expect(r.body?.detail).toBe("this endpoint needs a credential: send Authorization: Bearer <token or key>");
    }
    expect((await call("/healthz", null)).status).toBe(200);
    expect((await call("/readyz", null)).status).toBe(200);
  });

  test("/healthz and /readyz: counts and ids for a role that sees every row and column alone; the status code the same for every caller", async () => {
    const org2 = await token({ role: "support", org_id: 2 });
    const full = { rows: RECORDS.length, snapshotId: server.engine().store.snapshotId };
    for (const [path, status] of [["/healthz", "ok"], ["/readyz", "ready"]] as const) {
      const admin = await call(path, ADMIN_KEY);
      expect({ code: admin.status, rows: admin.body?.rows, snapshotId: admin.body?.snapshotId }).toEqual({ code: 200, ...full });
      for (const credential of [null, SUPPORT_KEY, org2, "not-a-key-of-the-policy"]) {
        const answer = await call(path, credential);
        expect({ code: answer.status, body: answer.body }).toEqual({ code: 200, body: { status } });
      }
    }
  });

  test("each invalid credential, with its reason and never its text", async () => {
    const cases: [string, string | Promise<string>, string][] = [
      ["another scheme", "", "this endpoint needs a credential: send Authorization: Bearer <token or key>"],
      ["an unknown key", "not-a-key-of-the-policy", "the credential is not valid: not a key of the access policy, nor a JWT"],
      ["a malformed JWT", "bm90IGpzb24.bm90IGpzb24.c2ln", "the token is not valid: it is not a well-formed JWT"],
      ["another secret's signature", token({ role: "admin" }, { secret: "someone-elses-secret-that-is-long-enough-000" }), "the token is not valid: its signature does not verify"],
      ["expired", token({ role: "admin" }, { exp: Math.floor(Date.now() / 1000) - 60 }), "the token has expired"],
      ["not valid yet", token({ role: "admin" }, { nbf: "2h" }), "the token is not valid: it is not valid yet (nbf)"],
      ["another issuer", token({ role: "admin" }, { iss: "https://evil.test" }), "the token is not valid: its issuer (iss) is not the expected one"],
      ["another audience", token({ role: "admin" }, { aud: "another-service" }), "the token is not valid: its audience (aud) is not this service"],
      ["an algorithm the policy does not accept", token({ role: "admin" }, { alg: "HS384" }), "the token is not valid: its algorithm (alg) is not one the access policy accepts"],
      ["no expiry", token({ role: "admin" }, { exp: null }), "the token is not valid: it has no expiry (exp)"],
      ["longer than any identity provider issues", "x".repeat(9000), "the credential is longer than 8192 characters"],
    ];
    for (const [what, credential, detail] of cases) {
      const value = await credential;
      if (value !== "") secrets.push(value);
      const r = what === "another scheme" ? await call("/api/users", null, { headers: { authorization: `Basic ${btoa("a:b")}` } }) : await call("/api/users", value);
      expect({ what, status: r.status, detail: r.body?.detail }).toEqual({ what, status: 401, detail });
      expect(r.headers.get("www-authenticate")).toBe(what === "another scheme" ? "Bearer" : 'Bearer error="invalid_token"');
    }
  });

  test("a token verified before is refused once its exp has passed (the kept token too)", async () => {
    const soon = await token({ role: "admin" }, { exp: Math.floor(Date.now() / 1000) + 3600 });
    expect((await call("/api/users?pageSize=1", soon)).status).toBe(200);
    const realNow = Date.now;
    // the server runs in this process: two hours on
    Date.now = () => realNow() + 2 * 3600 * 1000;
    try {
      const r = await call("/api/users?pageSize=1", soon);
      expect({ status: r.status, detail: r.body?.detail }).toEqual({ status: 401, detail: "the token has expired" });
    } finally {
      Date.now = realNow;
    }
  });
});

describe("403: a valid credential its role does not admit", () => {
  test("an unknown role, no role, a claim missing or not fitting the role's filter, the metrics read by a role that does not see everything", async () => {
    const cases: [string, string, string][] = [
      ["unknown role", await token({ role: "intern" }), 'the token\'s role "intern" is not one of the access policy\'s'],
      ["no role claim", await token({ sub: "u1" }), 'the token names no role: its claim "role" is absent'],
      ["missing claim", await token({ role: "support" }), 'role "support" needs the claim "org_id", which the credential lacks'],
      ["null claim", await token({ role: "support", org_id: null }), 'role "support" needs the claim "org_id", which the credential lacks'],
      ["claim that does not fit", await token({ role: "support", org_id: "seven" }), 'the credential\'s claims do not fit role "support"\'s filter: the claim "org_id" must be a finite number or a numeric string for column "org_id" (number), not "seven"'],
    ];
    for (const [what, credential, detail] of cases) {
      const r = await call("/api/users", credential);
      expect({ what, status: r.status, detail: r.body?.detail, title: r.body?.title }).toEqual({ what, status: 403, detail, title: "Forbidden" });
      expect(r.headers.get("www-authenticate")).toBeNull();
    }
    for (const credential of [SUPPORT_KEY, await token({ role: "support", org_id: 1 })]) {
      const r = await call("/metrics", credential);
      expect({ status: r.status, detail: r.body?.detail }).toEqual({ status: 403, detail: 'role "support" may not read this: it needs a role that sees every row and column' });
    }
    expect((await call("/metrics", ADMIN_KEY)).status).toBe(200);
  });
});

describe("what each role sees, on every route", () => {
  test("admin: every row and column; support (a key of org 2, a JWT of org 3): its org's rows, its columns; auditor: the orgs its list claim names", async () => {
    const admin = await call("/api/users?pageSize=100", ADMIN_KEY);
    expect(admin.body?.total).toBe(60);
    expect(Object.keys((admin.body?.data as Record<string, unknown>[])[0])).toEqual(["id", "name", "email", "status", "org_id", "salary"]);
    const support = ["id", "name", "status", "org_id"];
    const views: [string, number[], string[]][] = [
      [SUPPORT_KEY, [2], support],
      [await token({ role: "support", org_id: 3 }), [3], support],
      [await token({ role: "auditor", orgs: [1, 3] }), [1, 3], ["id", "status", "org_id"]],
    ];
    for (const [credential, orgs, columns] of views) {
      const rows = RECORDS.filter((r) => orgs.includes(r.org_id));
      const cut = (r: (typeof RECORDS)[number]) => Object.fromEntries(columns.map((c) => [c, r[c as keyof typeof r]]));
      const page = await call("/api/users?pageSize=100&sortBy=id", credential);
      expect(page.body?.data).toEqual(rows.map(cut));
      const posted = await call("/api/users", credential, postJson({ startRow: 0, endRow: 100, sortModel: [{ colId: "id", sort: "desc" }] }));
      expect(posted.body).toEqual({ data: rows.map(cut).reverse(), total: rows.length });
      const schema = await call("/api/users/schema", credential);
      expect({ columns: (schema.body?.columns as { id: string }[]).map((c) => c.id), rows: schema.body?.rows, partition: schema.body?.partition }).toEqual({ columns, rows: rows.length, partition: null });
      const facets = await call("/api/users/facets?columns=org_id,status", credential);
      expect(facets.body).toEqual({
        facets: {
          org_id: { kind: "number", min: Math.min(...orgs), max: Math.max(...orgs), nulls: 0 },
          status: {
            kind: "enum",
            values: [
              { value: "active", count: rows.filter((r) => r.status === "active").length },
              { value: "inactive", count: rows.filter((r) => r.status === "inactive").length },
            ].sort((a, b) => b.count - a.count),
            distinct: 2,
            nulls: 0,
          },
        },
        total: rows.length,
      });
      const csv = await call("/api/users/export?format=csv&sortBy=id", credential);
      expect(csv.text).toBe([columns.join(","), ...rows.map((r) => columns.map((c) => String(r[c as keyof typeof r])).join(","))].join("\r\n") + "\r\n");
      // the search never matches through a hidden column: "org1.example" is only in email
      expect((await call("/api/users?q=org1.example", credential)).body?.total).toBe(0);
      // a hidden column is an unknown one
      const hidden = await call("/api/users?sortBy=salary", credential);
      expect({ status: hidden.status, detail: hidden.body?.detail }).toEqual({ status: 400, detail: `sortBy: unknown column "salary"; valid columns: ${columns.join(", ")}` });
      // explain: its root alone (the steps below it count rows it does not see)
      const explained = await call("/api/users/explain?analyze=true&sortBy=name", credential);
      if (columns.includes("name")) {
        expect(explained.body?.plan).not.toHaveProperty("children");
        expect((explained.body?.plan as { rows: number }).rows).toBe(Math.min(10, rows.length));
      }
    }
    expect((await call("/api/users?q=org1.example", ADMIN_KEY)).body?.total).toBe(20);
    // a path no route serves, with a valid credential: its 404
    expect((await call("/api/users/nope", SUPPORT_KEY)).status).toBe(404);
    expect((await call("/api", SUPPORT_KEY)).status).toBe(200);
  });
});

describe("entity tags per role and claims", () => {
  test("a role's search for a word only in a column it cannot see answers, and is planned, as a search for a word in no column", async () => {
    // "org1.example" is only in email, which support and auditor do not see; "zq9xw.vk" is in no value
    for (const credential of [SUPPORT_KEY, await token({ role: "auditor", orgs: [1, 2, 3] })]) {
      for (const [hidden, absent] of [
        ["q=org1.example", "q=zq9xw.vk"],
        ["q=@", "q=%C5%8B"],
        ["q=example%20status", "q=zq9xw.vk%20status"],
      ]) {
        // the bodies and plans as JSON, the first term written as the absent one's (the request's q is echoed)
        const term = (query: string) => JSON.stringify(decodeURIComponent(query.slice(2)).split(" ")[0]).slice(1, -1);
        const same = (text: string) => text.replaceAll(term(hidden), term(absent));
        const found = await call(`/api/users?${hidden}&sortBy=id`, credential);
        const none = await call(`/api/users?${absent}&sortBy=id`, credential);
        expect(found.status).toBe(200);
        expect(none.body?.total).toBe(0);
        expect(same(JSON.stringify(found.body))).toEqual(JSON.stringify(none.body));
        // explain without analyze: the same plan and the same estimates, but for the term itself
        const plan = async (query: string) => JSON.stringify((await call(`/api/users/explain?${query}&sortBy=id`, credential)).body?.plan);
        expect(same(await plan(hidden))).toEqual(await plan(absent));
      }
    }
  });

  test("a 304 never crosses roles or tenants; the same tenant's other token shares the tag; HEAD too", async () => {
    const path = "/api/users?pageSize=5&sortBy=id";
    const org2 = await token({ role: "support", org_id: 2 });
    const org2Again = await token({ role: "support", org_id: 2, jti: "another" });
    const org3 = await token({ role: "support", org_id: 3 });
    const tags = new Map<string, string>();
    for (const [name, credential] of [["admin", ADMIN_KEY], ["org2 key", SUPPORT_KEY], ["org2", org2], ["org2 again", org2Again], ["org3", org3]] as const) {
      tags.set(name, (await call(path, credential)).headers.get("etag") as string);
    }
    expect(new Set([tags.get("admin"), tags.get("org2"), tags.get("org3")]).size).toBe(3);
    expect(tags.get("org2 again")).toBe(tags.get("org2"));
    expect(tags.get("org2 key")).toBe(tags.get("org2"));
    for (const [credential, tag, expected] of [
      [org3, tags.get("org2"), 200],
      [ADMIN_KEY, tags.get("org2"), 200],
      [org2, tags.get("admin"), 200],
      [org2Again, tags.get("org2"), 304],
      [org3, tags.get("org3"), 304],
    ] as const) {
      const r = await call(path, credential, { headers: { "if-none-match": tag as string } });
      expect(r.status).toBe(expected);
      const head = await fetch(`${server.url}${path}`, { method: "HEAD", headers: { authorization: `Bearer ${credential}`, "if-none-match": tag as string } });
      expect(head.status).toBe(expected);
    }
    // every GET route's tags differ per role
    for (const route of ["/api/users/schema", "/api/users/facets?columns=status", "/api/users/export?format=csv", "/api/users/explain"]) {
      const a = (await call(route, ADMIN_KEY)).headers.get("etag");
      const b = (await call(route, org2)).headers.get("etag");
      const c = (await call(route, org3)).headers.get("etag");
      expect(new Set([a, b, c]).size).toBe(3);
    }
  });
});

describe("over a live replica's changes", () => {
  test("the rows a batch inserted or updated are in a role's rows exactly when they pass its filter, cut to its columns, on every route; an admin's tags carry the LSN, a tenant's the snapshot id alone; tags never cross roles, and a batch of other tenants' rows leaves a tenant's tags as they were", async () => {
    const live = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 100, logger: pino({ level: "silent" }), access: policyFile, cacheDir: join(dir, "cache-live") });
    try {
      const snapshotId = live.engine().store.snapshotId;
      const org2 = await token({ role: "support", org_id: 2 });
      const org3 = await token({ role: "support", org_id: 3 });
      const path = "/api/users?pageSize=100&sortBy=id";
      const before = (await call(path, org2, { base: live.url })).headers.get("etag") as string;
      // the model: the table's rows as the batches leave them
      const model = new Map<number, (typeof RECORDS)[number]>(RECORDS.map((r) => [r.id, { ...r }]));
      const batch = (lsn: string, changes: Change[]): ChangeBatch => {
        for (const c of changes) {
          if (c.op === "delete") model.delete(c.key as number);
          else model.set(c.record.id as number, c.record as (typeof RECORDS)[number]);
        }
        return { lsn, commitTime: Date.now(), changes };
      };
      const row = (id: number, org: number, email: string) => ({ id, name: `Changed ${id}`, email, status: "active", org_id: org, salary: 1 });
      // an insert into org 2 whose e-mail alone holds "zqx"; org 1's row 1 moved into org 2; org 2's row 2 moved out; a delete of org 2's row 5
      live.changes.apply(batch("0/1000", [{ op: "upsert", record: row(100, 2, "zqx@org2.example") }, { op: "upsert", record: row(1, 2, "one@org2.example") }, { op: "upsert", record: row(2, 3, "two@org3.example") }, { op: "delete", key: 5 }]));
      // the key of row 8 (org 2) changed, and a row inserted into org 3
      live.changes.apply(batch("0/2000", [{ op: "delete", key: 8 }, { op: "upsert", record: row(108, 2, "eight@org2.example") }, { op: "upsert", record: row(101, 3, "zqx@org3.example") }]));
      // a support role sees some rows and columns: X-Snapshot-Id without the LSN (other tenants' writes are not its business)
      const version = snapshotId;
      const support = ["id", "name", "status", "org_id"];
      for (const [credential, org] of [[org2, 2], [SUPPORT_KEY, 2], [org3, 3]] as const) {
        const rows = [...model.values()].filter((r) => r.org_id === org).sort((a, b) => a.id - b.id);
        const cut = (r: (typeof RECORDS)[number]) => Object.fromEntries(support.map((c) => [c, r[c as keyof typeof r]]));
        const page = await call(path, credential, { base: live.url });
        expect({ data: page.body?.data, total: page.body?.total, version: page.headers.get("x-snapshot-id") }).toEqual({ data: rows.map(cut), total: rows.length, version });
        const body = { startRow: 0, endRow: 100, sortModel: [{ colId: "name", sort: "desc" as const }], filterModel: { status: { filterType: "set", values: ["active"] } } };
        const posted = await call("/api/users", credential, { ...postJson(body), base: live.url });
        expect({ keys: (posted.body?.data as { id: unknown }[]).map((r) => r.id), total: posted.body?.total }).toEqual(oraclePost(rows, TABLE, body));
        // a term only the hidden e-mails hold matches nothing; the admin finds the rows through them
        expect((await call("/api/users?q=zqx", credential, { base: live.url })).body?.total).toBe(0);
        const schema = await call("/api/users/schema", credential, { base: live.url });
        expect({ rows: schema.body?.rows, snapshotId: schema.body?.snapshotId }).toEqual({ rows: rows.length, snapshotId: undefined });
        const facets = await call("/api/users/facets?columns=status", credential, { base: live.url });
        expect(facets.body?.total).toBe(rows.length);
        const ndjson = await call("/api/users/export?format=ndjson&sortBy=id", credential, { base: live.url });
        expect(ndjson.text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))).toEqual(rows.map(cut));
        expect(ndjson.headers.get("x-snapshot-id")).toBe(version);
        const csv = await call("/api/users/export?format=csv", credential, { base: live.url });
        expect(csv.text.split("\r\n")[0]).toBe(support.join(","));
        const explained = await call("/api/users/explain", credential, { ...postJson({ analyze: true }), base: live.url });
        expect(JSON.stringify(explained.body)).not.toContain("changed rows");
      }
      expect((await call("/api/users?q=zqx", ADMIN_KEY, { base: live.url })).body?.total).toBe(2);
      // (what a role limited to some rows is not told: how many rows of the table changed)
      expect(JSON.stringify((await call("/api/users/explain", ADMIN_KEY, { ...postJson({ analyze: true }), base: live.url })).body)).toContain("changed rows");
      // tags: the version's and the role's
      const tags = new Map<string, string>();
      for (const [name, credential] of [["admin", ADMIN_KEY], ["org2", org2], ["org3", org3]] as const) tags.set(name, (await call(path, credential, { base: live.url })).headers.get("etag") as string);
      expect(new Set([...tags.values(), before]).size).toBe(4);
      for (const [credential, tag, expected] of [
        [org2, before, 200],
        [org2, tags.get("admin"), 200],
        [org3, tags.get("org2"), 200],
        [ADMIN_KEY, tags.get("org2"), 200],
        [SUPPORT_KEY, tags.get("org2"), 304],
      ] as const) {
        expect((await call(path, credential, { headers: { "if-none-match": tag as string }, base: live.url })).status).toBe(expected);
      }
      // a batch of org 3's rows alone: org 2's tags (listing, export, schema) are as they were, org 3's are not
      const org2Paths = [path, "/api/users/export?format=ndjson", "/api/users/schema"];
      const tagsOf = async (credential: string) => Promise.all(org2Paths.map(async (p) => (await call(p, credential, { base: live.url })).headers.get("etag")));
      const [org2Before, org3Before] = [await tagsOf(org2), await tagsOf(org3)];
      const exportName = async (credential: string) => (await call("/api/users/export?format=ndjson", credential, { base: live.url })).headers.get("content-disposition");
      const org2Name = await exportName(org2);
      live.changes.apply(batch("0/3000", [{ op: "upsert", record: row(101, 3, "moved@org3.example") }, { op: "upsert", record: row(102, 3, "new@org3.example") }]));
      expect(await tagsOf(org2)).toEqual(org2Before);
      expect(await exportName(org2)).toBe(org2Name as string);
      const org3After = await tagsOf(org3);
      for (let i = 0; i < org2Paths.length; i++) expect(org3After[i]).not.toBe(org3Before[i]);
      expect((await call(path, org2, { headers: { "if-none-match": org2Before[0] as string }, base: live.url })).status).toBe(304);
      // the admin's version moved on: its tag is another
      expect((await call(path, ADMIN_KEY, { base: live.url })).headers.get("etag")).not.toBe(tags.get("admin"));
    } finally {
      await live.stop();
    }
  });
});

describe("denials counted and logged", () => {
  test("the metrics count denials by reason; a reason is logged at most once a second; no log line holds a credential or a secret", async () => {
    const before = await call("/metrics", ADMIN_KEY);
    const count = (text: string, reason: string) => Number(new RegExp(`users_listing_access_denials_total\\{reason="${reason}"\\} (\\d+)`).exec(text)?.[1]);
    const expired = await token({ role: "admin" }, { exp: Math.floor(Date.now() / 1000) - 10 });
    secrets.push(expired);
    for (let i = 0; i < 5; i++) {
      await call("/api/users", null);
      await call("/api/users", "nope-not-a-key");
      await call("/api/users", expired);
      await call("/api/users", SUPPORT_KEY.replace("2", "3"));
    }
    await call("/metrics", SUPPORT_KEY);
    const after = await call("/metrics", ADMIN_KEY);
    expect({
      missing: count(after.text, "missing") - count(before.text, "missing"),
      invalid: count(after.text, "invalid") - count(before.text, "invalid"),
      expired: count(after.text, "expired") - count(before.text, "expired"),
      not_allowed: count(after.text, "not_allowed") - count(before.text, "not_allowed"),
    }).toEqual({ missing: 5, invalid: 10, expired: 5, not_allowed: 1 });
    const denied = logs.lines.filter((l) => l.msg === "access denied");
    expect(denied.length).toBeGreaterThan(0);
    for (const reason of ["missing", "invalid", "expired"]) {
      const times = denied.filter((l) => l.reason === reason).map((l) => l.time as number);
      for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(1000);
    }
    for (const line of logs.text) for (const s of [...secrets, SUPPORT_KEY.replace("2", "3")]) expect(line.includes(s)).toBe(false);
  });
});

describe("the OpenAPI document per role", () => {
  test("the record schema lists the role's columns; without a valid credential, a 401 (it lists columns and enum values); keyed operations may answer 403", async () => {
    const columnsOf = async (credential: string | null) => Object.keys(((await call("/openapi/json", credential)).body?.components as { schemas: { User: { properties: object } } }).schemas.User.properties);
    expect(await columnsOf(ADMIN_KEY)).toEqual(["id", "name", "email", "status", "org_id", "salary"]);
    expect(await columnsOf(SUPPORT_KEY)).toEqual(["id", "name", "status", "org_id"]);
    expect(await columnsOf(await token({ role: "auditor", orgs: [1] }))).toEqual(["id", "status", "org_id"]);
    const missing = await call("/openapi/json", null);
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toBe("Bearer");
    const invalid = await call("/openapi/json", "not-a-key");
    expect(invalid.status).toBe(401);
    expect(invalid.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    expect(JSON.stringify(invalid.body)).not.toContain("org_id");
    const document = (await call("/openapi/json", SUPPORT_KEY)).body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>>; components: { securitySchemes: Record<string, { scheme: string }> } };
    expect(Object.keys(document.paths["/api/users"].get.responses)).toContain("403");
    expect(document.components.securitySchemes.apiKey.scheme).toBe("bearer");
  });
});

describe("reloading the policy", () => {
  test("secret rotation: both secrets while the new one comes in, then the old one's tokens (kept ones too) are refused; a role's new columns change its tags", async () => {
    const old = await token({ role: "support", org_id: 2 });
    const path = "/api/users?pageSize=3";
    const first = await call(path, old);
    expect(first.status).toBe(200);
    writeFileSync(policyFile, policyText({ secrets: [NEXT_SECRET, SECRET] }));
    server.access?.reload();
    const fresh = await token({ role: "support", org_id: 2 }, { secret: NEXT_SECRET });
    expect((await call(path, fresh)).status).toBe(200);
    expect((await call(path, old)).status).toBe(200);
    writeFileSync(policyFile, policyText({ secrets: [NEXT_SECRET], supportColumns: ["id", "name"] }));
    server.access?.reload();
    expect((await call(path, old)).status).toBe(401);
    const now = await call(path, fresh, { headers: { "if-none-match": first.headers.get("etag") as string } });
    expect(now.status).toBe(200);
    expect(Object.keys((now.body?.data as object[])[0])).toEqual(["id", "name"]);
  });

  test("a policy that does not pass its checks is refused and the old one keeps serving", async () => {
    const wages = policyText({ secrets: [NEXT_SECRET], supportColumns: ["id", "wages"] });
    writeFileSync(policyFile, wages);
    let refused: unknown = null;
    try {
      server.access?.reload();
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(PolicyError);
    expect((refused as PolicyError).problems).toEqual([`${policyFile}:${lineOf(wages, '"wages"')}: role "support": unknown column "wages"; the columns are id, name, email, status, org_id, salary`]);
    const r = await call("/api/users?pageSize=1", SUPPORT_KEY);
    expect(Object.keys((r.body?.data as object[])[0])).toEqual(["id", "name"]);
    expect(/users_listing_access_policy_reloads_total\{result="refused"\} 1/.test((await call("/metrics", ADMIN_KEY)).text)).toBe(true);
    writeFileSync(policyFile, policyText());
    server.access?.reload();
  });
});

describe("JWKS keys", () => {
  test("RS256 and ES256 tokens verify against the public keys; a token of another key, or of a kid the file lacks, does not", async () => {
    const rsa = await generateKeyPair("RS256");
    const ec = await generateKeyPair("ES256");
    const stranger = await generateKeyPair("RS256");
    const jwksDir = mkdtempSync(join(tmpdir(), "access-jwks-"));
    writeFileSync(join(jwksDir, "keys.json"), JSON.stringify({ keys: [{ ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256", use: "sig" }, { ...(await exportJWK(ec.publicKey)), kid: "ec-1", alg: "ES256", use: "sig" }] }));
    writeFileSync(join(jwksDir, "policy.json"), JSON.stringify({ jwt: { jwks: "keys.json", algorithms: ["RS256", "ES256"] }, roles: { admin: { columns: "*" } } }));
    const jwksServer = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 100, logger: pino({ level: "silent" }), access: join(jwksDir, "policy.json"), cacheDir: join(jwksDir, "cache") });
    try {
      const sign = (alg: string, kid: string, key: CryptoKey) => new SignJWT({ role: "admin" }).setProtectedHeader({ alg, kid }).setExpirationTime("1h").sign(key);
      const status = async (jwt: string) => (await fetch(`${jwksServer.url}/api/users?pageSize=1`, { headers: { authorization: `Bearer ${jwt}` } })).status;
      expect(await status(await sign("RS256", "rsa-1", rsa.privateKey))).toBe(200);
      expect(await status(await sign("ES256", "ec-1", ec.privateKey))).toBe(200);
      expect(await status(await sign("RS256", "rsa-1", stranger.privateKey))).toBe(401);
      expect(await status(await sign("RS256", "rsa-9", stranger.privateKey))).toBe(401);
      expect(await status(await token({ role: "admin" }))).toBe(401);
    } finally {
      await jwksServer.stop();
      rmSync(jwksDir, { recursive: true, force: true });
    }
  });
});

describe("--access replaces API keys", () => {
  test("given both, the API keys are not accepted and a warning says so", async () => {
    const { lines, logger } = capture();
    const both = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 100, logger, access: policyFile, apiKeys: ["legacy-key"], cacheDir: join(dir, "cache-both") });
    try {
      expect((await fetch(`${both.url}/api/users`, { headers: { authorization: "Bearer legacy-key" } })).status).toBe(401);
      expect((await fetch(`${both.url}/api/users`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status).toBe(200);
      expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(['--access replaces --api-keys-file and API_KEYS: the API keys are not used (give them to the policy\'s "keys" as SHA-256)']);
    } finally {
      await both.stop();
    }
  });
});

describe("serve --access as a process", () => {
  test("a bad policy stops the start with file:line: reason; ACCESS_FILE turns access control on; SIGHUP re-reads the policy, keeping the old one when the new one is refused", async () => {
    const bad = join(dir, "bad-policy.json");
    writeFileSync(bad, `{\n  "jwt": {"secret": "short"},\n  "roles": {"a": {"columns": ["id", "nope"]}}\n}\n`);
    const refused = Bun.spawnSync([process.execPath, join(ROOT, "src", "cli.ts"), "serve", "--snapshot", snapshot, "--no-demo", "--port", "0", "--cache-dir", join(dir, "cache-bad"), "--access", bad], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.toString().split("\n").filter((l) => l.startsWith(bad) || l.startsWith("error:"))).toEqual([
      `error: ${bad}:2: a secret must be at least 32 bytes long (it is 5): a random one, e.g. openssl rand -base64 48`,
      `${bad}:3: role "a": unknown column "nope"; the columns are id, name, email, status, org_id, salary`,
    ]);
    const live = join(dir, "live-policy.json");
    writeFileSync(live, policyText());
    const serve = await spawnServe(snapshot, ["--cache-dir", join(dir, "cache-process")], { ACCESS_FILE: live });
    try {
      expect((await fetch(`${serve.url}/api/users`)).status).toBe(401);
      expect((await fetch(`${serve.url}/api/users`, { headers: { authorization: `Bearer ${SUPPORT_KEY}` } })).status).toBe(200);
      const shoes = policyText({ supportColumns: ["id", "shoe_size"] });
      writeFileSync(live, shoes);
      serve.child.kill("SIGHUP");
      await serve.waitForLog("access policy reload refused; still serving the previous policy");
      const line = serve.logs().find((l) => l.msg === "access policy reload refused; still serving the previous policy");
      expect(line?.problems).toEqual([`${live}:${lineOf(shoes, '"shoe_size"')}: role "support": unknown column "shoe_size"; the columns are id, name, email, status, org_id, salary`]);
      const kept = await (await fetch(`${serve.url}/api/users?pageSize=1`, { headers: { authorization: `Bearer ${SUPPORT_KEY}` } })).json();
      expect(Object.keys(kept.data[0])).toEqual(["id", "name", "status", "org_id"]);
      writeFileSync(live, policyText({ supportColumns: ["id", "status"] }));
      serve.child.kill("SIGHUP");
      await serve.waitForLog("access policy reloaded");
      const now = await (await fetch(`${serve.url}/api/users?pageSize=1`, { headers: { authorization: `Bearer ${SUPPORT_KEY}` } })).json();
      expect(Object.keys(now.data[0])).toEqual(["id", "status"]);
      for (const l of serve.logs()) for (const s of [SECRET, ADMIN_KEY, SUPPORT_KEY]) expect(JSON.stringify(l).includes(s)).toBe(false);
    } finally {
      await serve.dispose();
    }
  }, 60_000);
});
