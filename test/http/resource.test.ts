/**
 * The resource name (docs/api.md "Resource name") over a real socket: `serve --resource people`
 * moves every data route to /api/people (listing, schema, facets, export, explain), names the
 * export file after it, documents those paths in the OpenAPI document and nothing under
 * /api/users, tells where they are at /api, labels the metrics with them, and needs the API key
 * on them; a name outside `[a-z][a-z0-9_-]{0,63}` stops `serve` at start-up.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { UserRecord } from "../../src/generate/record.ts";
import { demoPlugin } from "../../src/demo/plugin.ts";
import { DEFAULT_RESOURCE, parseResourceName, resourcePaths } from "../../src/http/resource.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { ROOT, snapshotDir, spawnServe } from "../support/serve-process.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";

const RECORDS: UserRecord[] = [
  { id: 1, name: "Ana Lima", email: "ana@example.com", status: "active" },
  { id: 2, name: "Bob Stone", email: "bob@example.org", status: "inactive" },
  { id: 3, name: "Cy Twombly", email: "cy@example.com", status: "active" },
];

/** Every data route of a resource: method, path under its base, a body for POST. */
const DATA_ROUTES: [string, string, unknown?][] = [
  ["GET", "?pageSize=2&sortBy=name"],
  ["POST", "", { startRow: 0, endRow: 2 }],
  ["GET", "/schema"],
  ["GET", "/facets?columns=status"],
  ["POST", "/facets", { columns: ["status"] }],
  ["GET", "/export?format=csv"],
  ["POST", "/export", { format: "ndjson" }],
  ["GET", "/explain?pageSize=2&analyze=true"],
  ["POST", "/explain", { startRow: 0, endRow: 2 }],
];

let dir: string;
let server: RunningServer;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "users-resource-"));
  const snapshot = join(dir, "people.snap");
  writeSnapshot(snapshot, buildStoreFromRecords(RECORDS));
  server = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 100, logger: pino({ level: "silent" }), resource: "people", apiKeys: ["k1"] });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A request with the key (or without, `key: null`). */
function call(method: string, path: string, body?: unknown, key: string | null = "k1") {
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

describe("serve --resource people", () => {
  test("every data route answers under /api/people, and needs the key there", async () => {
    for (const [method, suffix, body] of DATA_ROUTES) {
      const ok = await call(method, `/api/people${suffix}`, body);
      expect({ method, suffix, status: ok.status }).toEqual({ method, suffix, status: 200 });
      expect(ok.headers.get("x-snapshot-id")).toBe(server.engine().store.snapshotId);
      const refused = await call(method, `/api/people${suffix}`, body, null);
      expect({ method, suffix, status: refused.status }).toEqual({ method, suffix, status: 401 });
    }
    const page = (await (await call("GET", "/api/people?pageSize=2&sortBy=name")).json()) as { data: UserRecord[]; total: number };
    expect({ names: page.data.map((r) => r.name), total: page.total }).toEqual({ names: ["Ana Lima", "Bob Stone"], total: 3 });
  });

  test("/api/users and everything under it is a 404 (once the key is given), a wrong method on /api/people a 405", async () => {
    for (const [method, suffix, body] of DATA_ROUTES) {
      const path = `/api/users${suffix}`;
      const r = await call(method, path, body);
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 404 });
      expect(((await r.json()) as { type: string }).type).toBe("/problems/not-found");
      // without a key an unknown path under /api learns nothing either
      expect((await call(method, path, body, null)).status).toBe(401);
    }
    const wrong = await call("DELETE", "/api/people/schema");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect((await call("GET", "/api/people/")).status).toBe(404);
  });

  test("the export file is named after the resource", async () => {
    const csv = await call("GET", "/api/people/export?format=csv");
    expect(csv.headers.get("content-disposition")).toBe(`attachment; filename="people-${server.engine().store.snapshotId}.csv"`);
    expect((await csv.text()).split("\r\n")[0]).toBe("id,name,email,status");
    const ndjson = await call("POST", "/api/people/export", { format: "ndjson" });
    expect(ndjson.headers.get("content-disposition")).toBe(`attachment; filename="people-${server.engine().store.snapshotId}.ndjson"`);
  });

  test("the demo page names the resource's base on its root element (what the page's script reads)", async () => {
    const withDemo = startServer({ snapshot: join(dir, "people.snap"), port: 0, host: "127.0.0.1", maxPageSize: 100, logger: pino({ level: "silent" }), resource: "people", plugins: [demoPlugin("/api/people")] });
    try {
      const page = await fetch(`${withDemo.url}/`, { headers: { "accept-encoding": "gzip, br" } });
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(page.headers.get("content-security-policy")).not.toBeNull();
      const html = await page.text();
      expect(html).toContain('data-api-base="/api/people"');
      expect(html).not.toContain('data-api-base="/api/users"');
      const again = await fetch(`${withDemo.url}/`, { headers: { "if-none-match": page.headers.get("etag") as string } });
      expect(again.status).toBe(304);
      const head = await fetch(`${withDemo.url}/`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
    } finally {
      await withDemo.stop();
    }
  }, 60_000);

  test("/api tells where the data routes are", async () => {
    const r = await call("GET", "/api");
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      resource: "people",
      paths: { rows: "/api/people", schema: "/api/people/schema", facets: "/api/people/facets", export: "/api/people/export", explain: "/api/people/explain", changes: "/api/people/changes" },
      openapi: "/openapi/json",
    });
    expect((await call("GET", "/api", undefined, null)).status).toBe(401);
  });

  test("the OpenAPI document's paths follow, and nothing is left under /api/users", async () => {
    const doc = (await (await call("GET", "/openapi/json")).json()) as { paths: Record<string, Record<string, { tags: string[]; security: unknown[] }>>; tags: { name: string }[] };
    expect(Object.keys(doc.paths)).toEqual([
      "/api/people",
      "/api/people/schema",
      "/api/people/facets",
      "/api/people/export",
      "/api/people/explain",
      "/api/people/changes",
      "/api",
      "/healthz",
      "/readyz",
      "/metrics",
    ]);
    expect(JSON.stringify(doc)).not.toContain("/api/users");
    expect(doc.paths["/api/people"].get.tags).toEqual(["people"]);
    expect(doc.tags.map((t) => t.name)).toContain("people");
    const exportHeaders = (doc.paths["/api/people/export"].get as unknown as { responses: { 200: { headers: Record<string, { description: string }> } } }).responses[200].headers;
    expect(exportHeaders["Content-Disposition"].description).toContain('filename="people-<snapshotId>');
  });

  test("the metrics label the requests with the resource's paths", async () => {
    await call("GET", "/api/people/schema");
    const text = await (await call("GET", "/metrics")).text();
    expect(text).toMatch(/users_listing_http_request_duration_seconds_count\{route="\/api\/people\/schema",method="GET",status="200"\} \d+/);
    expect(text).not.toContain('route="/api/users');
  });
});

describe("the resource name", () => {
  test("is a lower-case letter, then up to 63 lower-case letters, digits, _ or -", () => {
    for (const name of ["a", "people", "user-accounts", "auth_users", "t2", "a".repeat(64)]) expect(parseResourceName(name, "--resource")).toBe(name);
    for (const name of ["", "Users", "1users", "-users", "_users", "user accounts", "users/x", "üsers", "users.json", "a".repeat(65)]) {
      expect(() => parseResourceName(name, "--resource")).toThrow(`--resource must be a lower-case letter followed by at most 63 lower-case letters, digits, "_" or "-" (got ${JSON.stringify(name)})`);
    }
    expect(resourcePaths()).toEqual({ name: DEFAULT_RESOURCE, rows: "/api/users", schema: "/api/users/schema", facets: "/api/users/facets", export: "/api/users/export", explain: "/api/users/explain", changes: "/api/users/changes" });
  });

  test("a bad --resource or RESOURCE stops serve at start-up with exit code 1 and the rule", () => {
    const data = snapshotDir(RECORDS);
    try {
      const run = (args: string[], env: Record<string, string> = {}) => {
        const result = Bun.spawnSync([process.execPath, join(ROOT, "src", "cli.ts"), "serve", "--snapshot", data.snapshot, "--port", "0", "--no-demo", ...args], {
          cwd: ROOT,
          env: { ...process.env, RESOURCE: "", ...env },
          stdout: "pipe",
          stderr: "pipe",
        });
        return { code: result.exitCode, stderr: result.stderr.toString() };
      };
      expect(run(["--resource", "Users"])).toEqual({
        code: 1,
        stderr: 'error: --resource must be a lower-case letter followed by at most 63 lower-case letters, digits, "_" or "-" (got "Users")\n',
      });
      expect(run([], { RESOURCE: "api/v2" })).toEqual({
        code: 1,
        stderr: 'error: RESOURCE must be a lower-case letter followed by at most 63 lower-case letters, digits, "_" or "-" (got "api/v2")\n',
      });
    } finally {
      data.remove();
    }
  });

  test("serve --resource and RESOURCE move the API in a real process; the flag wins over the variable", async () => {
    const data = snapshotDir(RECORDS);
    const serve = await spawnServe(data.snapshot, ["--resource", "members"], { RESOURCE: "people" });
    try {
      expect((await fetch(`${serve.url}/api/members?pageSize=1`)).status).toBe(200);
      expect((await fetch(`${serve.url}/api/people?pageSize=1`)).status).toBe(404);
      expect((await fetch(`${serve.url}/api/users?pageSize=1`)).status).toBe(404);
    } finally {
      await serve.dispose();
    }
    const fromEnv = await spawnServe(data.snapshot, [], { RESOURCE: "people" });
    try {
      expect((await fetch(`${fromEnv.url}/api/people/schema`)).status).toBe(200);
      expect((await fetch(`${fromEnv.url}/api/users/schema`)).status).toBe(404);
    } finally {
      await fromEnv.dispose();
      data.remove();
    }
  }, 60_000);
});
