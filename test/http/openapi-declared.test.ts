/**
 * The OpenAPI document at /openapi/json, made by @elysiajs/openapi from the routes the Elysia app
 * declares: for the default data, a wide table, and an access role limited to two columns, it
 * passes Redocly's recommended-strict rules, lists every route the app declares with an
 * operation (and no other), and each data route's parameters and record schema name exactly the
 * columns the caller may see.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import pino from "pino";
import { createEngine } from "../../src/engine/execute.ts";
import { createChangeFeed } from "../../src/events/change-feed.ts";
import { routeTable } from "../../src/http/app.ts";
import { KINDS } from "../../src/kinds/registry.ts";
import type { ColumnSpec, Schema } from "../../src/schema/kinds.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { writeSnapshot } from "../../src/snapshot/write.ts";
import { type TestServer, startTestServer } from "../support/server.ts";
import { type WideRecord, buildWideStore } from "../support/table-store.ts";

const WIDE_SPECS: ColumnSpec[] = [
  { id: "created_at", kind: "datetime" },
  { id: "birthday", kind: "date" },
  { id: "role", kind: "enum", values: ["owner", "admin", "member"] },
  { id: "age", kind: "number" },
  { id: "verified", kind: "boolean" },
  { id: "notes", kind: "text" },
  { id: "prefs", kind: "json" },
];
const WIDE: WideRecord[] = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  name: `N${i}`,
  email: `n${i}@x.com`,
  status: i % 2 === 0 ? "active" : "inactive",
  created_at: "2024-03-01T10:00:00.000Z",
  birthday: "1990-05-01",
  role: ["owner", "admin", "member"][i % 3],
  age: 20 + i,
  verified: i % 2 === 0,
  notes: `note ${i}`,
  prefs: { i },
}));

const KEY = "two-columns-key-0b1c2d";
const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");

let defaults: TestServer;
let wide: TestServer;
let dir: string;
let limited: RunningServer;

beforeAll(() => {
  defaults = startTestServer("default", 1000, { count: 500 });
  wide = startTestServer(buildWideStore(WIDE, WIDE_SPECS));
  dir = mkdtempSync(join(tmpdir(), "openapi-declared-"));
  const snapshot = join(dir, "wide.snap");
  writeSnapshot(snapshot, buildWideStore(WIDE, WIDE_SPECS));
  const policy = join(dir, "policy.json");
  writeFileSync(policy, JSON.stringify({ keys: [{ sha256: sha256(KEY), role: "two" }], roles: { two: { columns: ["id", "age"] } } }));
  limited = startServer({ snapshot, port: 0, host: "127.0.0.1", maxPageSize: 1000, logger: pino({ level: "silent" }), access: policy });
}, 60_000);
afterAll(async () => {
  await defaults.close();
  await wide.close();
  await limited.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The document a server answers (with the key when given). */
async function documentOf(url: string, key?: string): Promise<any> {
  const response = await fetch(`${url}/openapi/json`, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  return response.json();
}

/** What every document must hold for a caller who sees `shown`'s columns. */
async function checkDocument(doc: any, shown: Schema, engineSchemaOf: RunningServer): Promise<void> {
  const config = await createConfig({ extends: ["recommended-strict"], rules: { "info-license": "off", "no-unused-components": "off" } } as never);
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: join(import.meta.dir, "openapi.json"), config });
  expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
  // every route with an operation, in the table's order, and nothing else
  // a server answers change events (events/change-feed.ts): its table has that route too
  const table = routeTable({ engine: () => createEngine(engineSchemaOf.engine().store), maxPageSize: 1000, logger: pino({ level: "silent" }), changes: createChangeFeed({ logger: pino({ level: "silent" }) }) });
  const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
  expect(documented).toEqual(table.filter((r) => r.operation !== null).map((r) => `${r.method} ${r.path}`));
  // the record schema: the columns shown, in order; GET's filter parameters: those that take one
  expect(Object.keys(doc.components.schemas.User.properties)).toEqual(shown.columns.map((c) => c.id));
  const filters = (doc.paths["/api/users"].get.parameters as { name: string }[]).map((p) => p.name).filter((n) => n.startsWith("filter["));
  const expected = shown.columns.filter((c) => KINDS[c.kind].getFormDoc(c.id === shown.key) !== null).map((c) => `filter[${c.id}]`);
  expect(filters).toEqual(expected);
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: { name: string }[] }>>)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const p of op.parameters ?? []) {
        const column = /^filter\[(.+)\]$/.exec(p.name)?.[1];
        if (column !== undefined) expect({ at: `${method} ${path}`, column, shown: shown.columns.some((c) => c.id === column) }).toEqual({ at: `${method} ${path}`, column, shown: true });
      }
    }
  }
}

describe("the declared OpenAPI document", () => {
  test("the default data", async () => {
    await checkDocument(await documentOf(defaults.url), defaults.server.engine().store.schema, defaults.server);
  });

  test("a wide table", async () => {
    const doc = await documentOf(wide.url);
    await checkDocument(doc, wide.server.engine().store.schema, wide.server);
    expect(Object.keys(doc.components.schemas.User.properties)).toContain("prefs");
  });

  test("a role limited to two columns sees those two only", async () => {
    const doc = await documentOf(limited.url, KEY);
    const full = limited.engine().store.schema;
    const shown = { ...full, columns: full.columns.filter((c) => c.id === "id" || c.id === "age") };
    await checkDocument(doc, shown, limited);
    const text = JSON.stringify(doc);
    for (const hidden of ["created_at", "birthday", "notes", "verified", "email"]) expect(text).not.toContain(`"${hidden}"`);
  });
});
