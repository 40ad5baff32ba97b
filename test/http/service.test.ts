/**
 * One request path: every data route, GET and POST, over a real socket through the Elysia app,
 * reaches the query service once per request with its own route description (a spy on the
 * service's `handle` sees each route once per request), and explain prints the plan that ran —
 * the engine's plan of the listing's query, the same one the listing runs.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import pino from "pino";
import { createEngine, explain, type Engine } from "../../src/engine/execute.ts";
import { generateUsers } from "../../src/generate/users.ts";
import { type App, createApp } from "../../src/http/app.ts";
import { parseGetQuery } from "../../src/query/get.ts";
import { parsePostBody } from "../../src/query/post.ts";
import { type QueryService, createQueryService } from "../../src/service/pipeline.ts";
import { buildStoreFromRecords } from "../support/table-store.ts";

const store = buildStoreFromRecords(Array.from(generateUsers({ count: 3000, seed: 5 })));
let engine: Engine = createEngine(store);
const logger = pino({ level: "silent" });
let service: QueryService;
let spy: ReturnType<typeof spyOn>;
let app: App;
let url: string;

beforeAll(() => {
  service = createQueryService({ engine: () => engine, maxPageSize: 1000, logger });
  spy = spyOn(service, "handle");
  app = createApp({ engine: () => engine, maxPageSize: 1000, logger, service });
  app.listen({ port: 0, hostname: "127.0.0.1" });
  url = `http://127.0.0.1:${app.server?.port}`;
});
afterAll(() => app.stop(true));

/** The route names the service saw during `send`, in order. */
async function routesSeen(send: () => Promise<Response>): Promise<{ status: number; seen: string[] }> {
  spy.mockClear();
  const response = await send();
  await response.arrayBuffer();
  return { status: response.status, seen: spy.mock.calls.map((call: unknown[]) => (call[0] as { name: string }).name) };
}

const postJson = (path: string, body: unknown) => fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("every data route goes through the one service", () => {
  const cases: [string, () => Promise<Response>, string][] = [
    ["GET /api/users", () => fetch(`${url}/api/users?page=2&sort=name`), "rows.get"],
    ["POST /api/users", () => postJson("/api/users", { startRow: 0, endRow: 10 }), "rows.post"],
    ["GET /api/users/schema", () => fetch(`${url}/api/users/schema`), "schema.get"],
    ["GET /api/users/facets", () => fetch(`${url}/api/users/facets?columns=status`), "facets.get"],
    ["POST /api/users/facets", () => postJson("/api/users/facets", { columns: ["status"] }), "facets.post"],
    ["GET /api/users/export", () => fetch(`${url}/api/users/export?format=ndjson&filter[status]=Active`), "export.get"],
    ["POST /api/users/export", () => postJson("/api/users/export", { format: "csv" }), "export.post"],
    ["GET /api/users/explain", () => fetch(`${url}/api/users/explain?sort=name`), "explain.get"],
    ["POST /api/users/explain", () => postJson("/api/users/explain", { startRow: 0, endRow: 5, analyze: true }), "explain.post"],
  ];
  for (const [label, send, name] of cases) {
    test(`${label}: once, as ${name}`, async () => {
      expect(await routesSeen(send)).toEqual({ status: 200, seen: [name] });
    });
  }

  test("a bad request and a 304 go through it too, once; a route that is not over the data does not", async () => {
    expect(await routesSeen(() => fetch(`${url}/api/users?page=0`))).toEqual({ status: 400, seen: ["rows.get"] });
    const first = await fetch(`${url}/api/users/facets?columns=status`);
    await first.arrayBuffer();
    const etag = first.headers.get("etag") as string;
    expect(await routesSeen(() => fetch(`${url}/api/users/facets?columns=status`, { headers: { "if-none-match": etag } }))).toEqual({ status: 304, seen: ["facets.get"] });
    expect(await routesSeen(() => fetch(`${url}/healthz`))).toEqual({ status: 200, seen: [] });
    expect(await routesSeen(() => fetch(`${url}/api/users/nothing`))).toEqual({ status: 404, seen: [] });
  });
});

describe("explain prints the plan that ran", () => {
  test("without analyze: the engine's plan of the listing's query", async () => {
    engine = createEngine(store);
    const search = "sort=name&order=desc&filter[status]=Active&q=an";
    const answered = (await (await fetch(`${url}/api/users/explain?${search}`)).json()) as { plan: unknown };
    const expected = explain(createEngine(store), parseGetQuery(search, 1000, store.schema).query, false).plan;
    expect(answered.plan).toEqual(expected);
  });

  test("with analyze: every step carries the rows it gave, and the root's are the listing's window", async () => {
    engine = createEngine(store);
    const body = { startRow: 10, endRow: 30, sortModel: [{ colId: "name", sort: "asc" }], filterModel: { status: { filterType: "set", values: ["Active"] } } };
    const answered = (await (await postJson("/api/users/explain", { ...body, analyze: true })).json()) as { plan: Step };
    const listing = (await (await postJson("/api/users", body)).json()) as { data: unknown[]; total: number };
    const all = (step: Step): Step[] => [step, ...(step.children ?? []).flatMap(all)];
    for (const step of all(answered.plan)) expect(step.rows).toBeNumber();
    expect(answered.plan.rows).toBe(listing.data.length);
    // the same plan the engine prints for the query run with analyze, step by step, timings aside
    const expected = explain(createEngine(store), parsePostBody(body, 1000, store.schema).query, true).plan as Step;
    const shape = (step: Step): unknown => ({ op: step.op, column: step.column, index: step.index, detail: step.detail, rows: step.rows, children: step.children?.map(shape) });
    expect(shape(answered.plan)).toEqual(shape(expected));
  });
});

/** A printed plan step (docs/api.md "Explain"). */
interface Step {
  op: string;
  column?: string;
  index?: string;
  detail?: string;
  rows?: number;
  children?: Step[];
}
