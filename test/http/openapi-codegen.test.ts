/**
 * The OpenAPI document at /openapi/json is fit for code generation: it passes Redocly's
 * strictest rule set as OpenAPI 3.1, has the named component schemas, and the TypeScript that
 * openapi-typescript generates from it types a real openapi-fetch client strictly enough that
 * (a) a client using both endpoints compiles under `strict` with no diagnostic, (b) the same
 * client does not compile against a document without the POST body schema, and (c) its
 * requests, run against the server, get the answers the types promise.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import type { UserRecord } from "../../src/generate/record.ts";
import { type TestServer, startTestServer } from "../support/server.ts";

const REPO = resolve(import.meta.dir, "../..");
/** Compiling with lib.dom takes a few seconds on 2 shared cores. */
const TEST_MS = 60_000;

const RECORDS: UserRecord[] = [
  { id: 1, name: "Alice Martin", email: "alice@example.com", status: "active" },
  { id: 2, name: "Bob Stone", email: "bob@example.org", status: "inactive" },
  { id: 3, name: "José Núñez", email: "jose@example.es", status: "active" },
  { id: 4, name: "Émile Zola", email: "emile@example.fr", status: "inactive" },
  { id: 5, name: "Zoë Adams", email: "zoe@example.com", status: "active" },
  { id: 6, name: "Mary Ann Lee", email: "mary@example.com", status: "inactive" },
  { id: 7, name: "Walter White", email: "walter@example.com", status: "active" },
];

/**
 * The typed client: a filtered, sorted POST /api/users, a GET /api/users with filter[status],
 * a refused POST read through its problem type, and /healthz. The `@ts-expect-error` lines
 * make the compilation fail when the generated types are too loose to refuse them (an unused
 * expectation is itself an error).
 */
const CLIENT = `import createClient from "openapi-fetch";
import type { components, paths } from "./api.ts";

type User = components["schemas"]["User"];
type Problem = components["schemas"]["Problem"];

export interface Answers {
  post: { ids: number[]; total: number };
  get: { ids: number[]; total: number; page: number; totalPages: number; statuses: User["status"][] };
  refused: { status: number; pointers: string[] };
  health: { rows: number };
}

export async function run(baseUrl: string): Promise<Answers> {
  const client = createClient<paths>({ baseUrl });

  const post = await client.POST("/api/users", {
    body: {
      startRow: 0,
      endRow: 10,
      sortModel: [{ colId: "status", sort: "asc" }, { colId: "name", sort: "desc" }],
      filterModel: {
        email: { filterType: "text", type: "contains", filter: "example.com" },
        id: { filterType: "number", type: "inRange", filter: 0, filterTo: 7 },
        status: null,
      },
    },
  });
  if (post.data === undefined) throw new Error("POST failed: " + JSON.stringify(post.error));
  const rows: User[] = post.data.data;

  const get = await client.GET("/api/users", {
    params: { query: { "filter[status]": "inactive", sortBy: "email", sortOrder: "desc", pageSize: 2, page: 1 } },
  });
  if (get.data === undefined) throw new Error("GET failed: " + JSON.stringify(get.error));

  const bad = await client.POST("/api/users", {
    body: { startRow: 5, endRow: 1, filterModel: { name: { filterType: "set", values: ["x"] }, status: { operator: "OR", conditions: [] } } },
  });
  const problem: Problem | undefined = bad.error;
  if (problem === undefined) throw new Error("the bad POST was answered");

  const health = await client.GET("/healthz");
  if (health.data === undefined) throw new Error("GET /healthz failed");

  return {
    post: { ids: rows.map((r) => r.id), total: post.data.total },
    get: {
      ids: get.data.data.map((r) => r.id),
      total: get.data.total,
      page: get.data.page,
      totalPages: get.data.pagination.totalPages,
      statuses: get.data.data.map((r) => r.status),
    },
    refused: { status: problem.status, pointers: (problem.errors ?? []).map((e) => e.pointer ?? e.parameter ?? "") },
    health: { rows: health.data.rows },
  };
}

export async function typeChecks(baseUrl: string): Promise<void> {
  const client = createClient<paths>({ baseUrl });
  // @ts-expect-error an unknown column is not a ColumnId
  await client.POST("/api/users", { body: { sortModel: [{ colId: "age", sort: "asc" }] } });
  // @ts-expect-error a number filter has no type "contains"
  await client.POST("/api/users", { body: { filterModel: { id: { filterType: "number", type: "contains", filter: 1 } } } });
  // @ts-expect-error the filter model has a key per column only
  const byColumn: components["schemas"]["FilterModel"] = { age: { filterType: "text", filter: "1" } };
  await client.POST("/api/users", { body: { filterModel: byColumn } });
  // @ts-expect-error sortOrder is asc or desc
  await client.GET("/api/users", { params: { query: { sortOrder: "up" } } });
  // @ts-expect-error filter[status] is a string
  await client.GET("/api/users", { params: { query: { "filter[status]": 1 } } });
  const page = await client.GET("/api/users");
  // @ts-expect-error a page has no "rows"
  page.data?.rows;
}
`;

let srv: TestServer;
let dir: string;
let doc: Record<string, any>;

beforeAll(async () => {
  srv = startTestServer(RECORDS, 50);
  dir = mkdtempSync(join(tmpdir(), "users-codegen-"));
  // The client resolves openapi-fetch (and the compiler its types) from the project's packages.
  symlinkSync(join(REPO, "node_modules"), join(dir, "node_modules"), "dir");
  const response = await fetch(`${srv.url}/openapi/json`);
  expect(response.status).toBe(200);
  doc = (await response.json()) as Record<string, any>;
});

afterAll(async () => {
  await srv?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** TypeScript generated from an OpenAPI document, as a module source. */
async function generate(document: object): Promise<string> {
  return astToString(await openapiTS(document as never, { silent: true }));
}

/**
 * Type-checks `files` (name → source) in a fresh folder under `dir`, as `tsc --noEmit --strict`
 * would, with the DOM's fetch types and no runtime-specific ones.
 * @returns the diagnostics, one line each
 */
function typeCheck(name: string, files: Record<string, string>): string[] {
  const folder = join(dir, name);
  mkdirSync(folder);
  for (const [file, source] of Object.entries(files)) writeFileSync(join(folder, file), source);
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    allowImportingTsExtensions: true,
    // Library declarations are not under test; the generated api.ts and the client are.
    skipLibCheck: true,
  };
  const program = ts.createProgram(
    Object.keys(files).map((f) => join(folder, f)),
    options,
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file !== undefined && d.start !== undefined ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : "";
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
}

/** Every object in a JSON value, depth first. */
function* objects(value: unknown): Generator<Record<string, unknown>> {
  if (Array.isArray(value)) for (const item of value) yield* objects(item);
  else if (typeof value === "object" && value !== null) {
    yield value as Record<string, unknown>;
    for (const child of Object.values(value)) yield* objects(child);
  }
}

describe("the OpenAPI document", () => {
  test("is OpenAPI 3.1 with a version, a server, and the named schemas the operations reference", () => {
    expect(doc.openapi).toStartWith("3.1");
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(doc.servers.length).toBeGreaterThan(0);
    const names = [
      "User",
      "Problem",
      "FieldError",
      "GetUsersResponse",
      "PostUsersRequest",
      "PostUsersResponse",
      "SortModelItem",
      "TextFilterModel",
      "NumberFilterModel",
      "SetFilterModel",
      "CombinedFilterModel",
      "ColumnFilterModel",
      "FilterModel",
      "Health",
      "Ready",
    ];
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(names));
    const users = doc.paths["/api/users"];
    expect(users.post.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/PostUsersRequest" });
    expect(users.post.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/PostUsersResponse" });
    expect(users.get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/GetUsersResponse" });
    expect(doc.components.schemas.ColumnFilterModel.oneOf).toHaveLength(5);
    expect(Object.keys(doc.components.schemas.FilterModel.properties)).toEqual(["id", "name", "email", "status"]);
    expect(doc.components.schemas.TextFilterModel.properties.type.enum).toContain("notBlank");
    expect(doc.components.schemas.NumberFilterModel.properties.type.enum).toContain("inRange");
  });

  test("documents every parameter of GET, a filter[<col>] per column, and the statuses that apply", () => {
    const users = doc.paths["/api/users"];
    const parameters = users.get.parameters.map((p: { name: string }) => p.name);
    expect(parameters).toEqual(
      expect.arrayContaining(["page", "pageSize", "limit", "sortBy", "sort", "sortOrder", "order", "filter[id]", "filter[name]", "filter[email]", "filter[status]"]),
    );
    expect(Object.keys(users.get.responses).sort()).toEqual(["200", "304", "400", "401", "405", "500", "503"]);
    expect(Object.keys(users.post.responses).sort()).toEqual(["200", "400", "401", "405", "413", "415", "500", "503"]);
    expect(users.get.responses["400"].content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem" });
    expect(users.post.responses["415"].content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem" });
    expect(users.get.responses["405"].headers.Allow).toBeDefined();
    expect(users.get.responses["304"].content).toBeUndefined();
  });

  test("writes nullable values the 3.1 way, never with `nullable`", () => {
    for (const node of objects(doc)) expect(Object.keys(node)).not.toContain("nullable");
    expect(doc.components.schemas.PostUsersRequest.properties.filterModel.oneOf).toContainEqual({ type: "null" });
  });

  test("passes Redocly's recommended-strict rules with no error", async () => {
    // The package has no license to state; components kept for routes (readiness) and for
    // clients' error handling (404) may be unused by the operations listed.
    const config = await createConfig({ extends: ["recommended-strict"], rules: { "info-license": "off", "no-unused-components": "off" } } as never);
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: join(dir, "openapi.json"), config });
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
  });
});

describe("a client generated from it", () => {
  test(
    "type-checks under strict with no diagnostic",
    async () => {
      const api = await generate(doc);
      expect(typeCheck("client", { "api.ts": api, "client.ts": CLIENT })).toEqual([]);
    },
    TEST_MS,
  );

  test(
    "does not type-check against a document without the POST body schema",
    async () => {
      const broken = structuredClone(doc);
      delete broken.paths["/api/users"].post.requestBody;
      const diagnostics = typeCheck("broken", { "api.ts": await generate(broken), "client.ts": CLIENT });
      // The filtered, sorted POST's body no longer fits the operation.
      expect(diagnostics.some((d) => d.includes("sortModel") && d.includes("is not assignable"))).toBe(true);
    },
    TEST_MS,
  );

  test(
    "gets the answers its types promise from the server",
    async () => {
      const folder = join(dir, "run");
      mkdirSync(folder);
      writeFileSync(join(folder, "api.ts"), await generate(doc));
      writeFileSync(join(folder, "client.ts"), CLIENT);
      const client = (await import(join(folder, "client.ts"))) as { run: (url: string) => Promise<any> };
      const answers = await client.run(srv.url);
      // POST: email contains "example.com" (1, 5, 6, 7) and 0 < id < 7 (not 7), by status then name descending.
      expect(answers.post).toEqual({ ids: [5, 1, 6], total: 3 });
      // GET: inactive (2, 4, 6) by email descending: mary@, emile@, bob@; two a page.
      expect(answers.get).toEqual({ ids: [6, 4], total: 3, page: 1, totalPages: 2, statuses: ["inactive", "inactive"] });
      expect(answers.refused.status).toBe(400);
      expect(answers.refused.pointers).toEqual(expect.arrayContaining(["/endRow", "/filterModel/status/conditions"]));
      expect(answers.health).toEqual({ rows: RECORDS.length });
    },
    TEST_MS,
  );
});
