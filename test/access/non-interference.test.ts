/**
 * The non-interference rule (docs/api.md "Access control"): for
 * a role that sees some rows or columns, two tables that differ only outside its view — other
 * rows changed, dropped or added, its rows' hidden columns changed — give it byte-identical
 * answers on every data route: listing (GET, POST), search, facets (GET, POST), export (CSV,
 * NDJSON, GET, POST), explain (GET, POST, with and without analyze: its times set aside),
 * `/schema`, the OpenAPI document, and the 4xx of a hidden column, a value outside an enum's
 * list and a bad body — status, body and every header but `Date` and `X-Snapshot-Id`. Random
 * tables of any shape, random roles (some enums marked inferred, whose lists then come from the
 * role's rows), random requests, through the route table's handlers with the role's grant as the
 * envelope hands it (credentials and the envelope over a socket: test/http/access.test.ts).
 * Also over live batches: a snapshot, and the same snapshot with a change batch applied that
 * touches only rows and columns outside the view (as a live replica serves it), answer alike.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import pino from "pino";
import type { Grant } from "../../src/access/control.ts";
import { parsePolicy } from "../../src/access/policy.ts";
import { type RoleView, compileView } from "../../src/access/view.ts";
import { type Engine, applyChanges, createEngine } from "../../src/engine/execute.ts";
import { type Change, type ChangeBatch, lsnText } from "../../src/live/changes.ts";
import { OPENAPI_JSON, routeTable } from "../../src/http/app.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { written } from "../support/live-changes.ts";
import { filterModelArb, filterable, needleArb, quickArb, sortModelArb, tableArb, rowChangesArb } from "../support/table-arbitraries.ts";
import { type Table, type TableRecord, oracleRows } from "../support/table-oracle.ts";
import { buildTableStore } from "../support/table-store.ts";

const logger = pino({ level: "silent" });

interface Role {
  columns: "*" | string[];
  model: Record<string, Record<string, unknown>>;
}

function roleArb(table: Table, records: readonly TableRecord[]): fc.Arbitrary<Role> {
  const others = table.specs.filter((s) => s.id !== table.key).map((s) => s.id);
  const columns = fc.oneof({ weight: 1, arbitrary: fc.constant<"*">("*") }, { weight: 3, arbitrary: fc.subarray(others).map((ids) => [table.key, ...ids]) });
  return fc.record({ columns, model: filterModelArb(records, table) });
}

function grantOf(role: Role, engine: Engine): Grant {
  const text = JSON.stringify({ jwt: { secret: "s".repeat(40) }, roles: { tenant: { columns: role.columns, filterModel: role.model } } });
  const policy = parsePolicy(text, "policy.json", engine.store.schema, { dir: "." });
  const spec = policy.roles.get("tenant");
  if (spec === undefined) throw new Error("the role was not kept");
  const view = compileView(spec, {}, engine.store.schema, policy.id);
  if ("reason" in view) throw new Error(`no view: ${view.detail}`);
  return { principal: { role: spec, claims: {} }, view: view as RoleView };
}

/** What the role sees of the records (the oracle): its rows cut to its columns, as written, sorted. */
function visibleOf(table: Table, records: readonly TableRecord[], role: Role): string {
  const ids = role.columns === "*" ? table.specs.map((s) => s.id) : role.columns;
  const cut = { specs: table.specs.filter((s) => ids.includes(s.id)), key: table.key };
  return JSON.stringify(
    oracleRows(records, table, { sortModel: [], filterModel: role.model })
      .map((r) => JSON.stringify(written(cut, r)))
      .sort(),
  );
}

/** The other table: rows outside the view replaced, dropped or added; hidden values of the role's rows replaced. */
function otherArb(table: Table, records: readonly TableRecord[]) {
  return rowChangesArb(table, records, { keepWeight: 2, maxAdded: 5, suffix: "other" });
}

/** Requests of every route, naming only what the role sees, and error cases. */
function requestsArb(table: Table, records: readonly TableRecord[]) {
  return fc.record({
    bodies: fc.array(fc.record({ startRow: fc.integer({ min: 0, max: 30 }), size: fc.integer({ min: 1, max: 25 }), sortModel: sortModelArb(table), filterModel: filterModelArb(records, table), quickFilter: quickArb(records, table) }), { minLength: 1, maxLength: 2 }),
    facetColumns: fc.uniqueArray(fc.constantFrom(...filterable(table).map((s) => s.id)), { minLength: 1, maxLength: 3 }),
    needle: needleArb(records, table),
    search: fc.option(fc.constantFrom("a", "z", "1", "é", "2024"), { nil: undefined }),
  });
}

/** A request's answer as the rule compares it: status, every header but Date and X-Snapshot-Id, the body (explain's times zeroed). */
async function answerOf(response: Response | Promise<Response>, explain: boolean): Promise<{ status: number; headers: [string, string][]; body: string }> {
  const r = await response;
  const headers: [string, string][] = [];
  r.headers.forEach((value, name) => {
    if (name !== "date" && name !== "x-snapshot-id") headers.push([name, value]);
  });
  headers.sort();
  let body = await r.text();
  if (explain && r.status === 200) body = JSON.stringify(JSON.parse(body, (key, value) => (key === "ms" ? 0 : value)));
  return { status: r.status, headers, body };
}

type Requests = { bodies: { startRow: number; size: number; sortModel: { colId: string; sort: string; type?: string }[]; filterModel: Record<string, unknown>; quickFilter?: string }[]; facetColumns: string[]; needle: string; search?: string };

/** Every route's answers to the requests, for one table. */
async function answersOf(engine: Engine, grant: Grant, table: Table, requests: Requests): Promise<unknown[]> {
  const routes = routeTable({ engine: () => engine, maxPageSize: 100, logger, access: null });
  const handler = (method: string, path: string) => {
    const route = routes.find((r) => r.method === method && r.path === path);
    if (route === undefined) throw new Error(`no route ${method} ${path}`);
    return route.handler;
  };
  const url = (path: string) => `http://x${path}`;
  const get = (path: string) => handler("GET", path.split("?")[0])(new Request(url(path)), grant);
  const post = (path: string, body: unknown) => handler("POST", path)(new Request(url(path), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }), grant);
  const visible = new Set(grant.view.schema.columns.map((c) => c.id));
  const hidden = table.specs.find((s) => !visible.has(s.id) && s.kind !== "json");
  const enums = grant.view.schema.columns.filter((c): c is ColumnSpec & { values: string[] } => c.kind === "enum" && c.values !== undefined);
  const out: unknown[] = [];
  const push = async (what: string, response: Response | Promise<Response>, explain = false) => out.push([what, await answerOf(response, explain)]);
  await push("schema", get("/api/users/schema"));
  await push("openapi", get(OPENAPI_JSON));
  for (const b of requests.bodies) {
    const own = {
      startRow: b.startRow,
      endRow: b.startRow + b.size,
      sortModel: b.sortModel.filter((k) => visible.has(k.colId)),
      filterModel: Object.fromEntries(Object.entries(b.filterModel).filter(([id]) => visible.has(id))),
      quickFilter: b.quickFilter,
    };
    await push("post", post("/api/users", own));
    const params = new URLSearchParams({ page: "2", pageSize: String(b.size) });
    if (own.sortModel[0] !== undefined) params.set("sortBy", own.sortModel[0].colId);
    if (own.quickFilter !== undefined) params.set("q", own.quickFilter);
    await push("get", get(`/api/users?${params}`));
    await push("export ndjson", post("/api/users/export", { format: "ndjson", sortModel: own.sortModel, filterModel: own.filterModel, quickFilter: own.quickFilter }));
    await push("export csv", get(`/api/users/export?format=csv&${params}`));
    await push("explain", post("/api/users/explain", own), true);
    await push("explain analyze", post("/api/users/explain", { ...own, analyze: true }), true);
    await push("explain get", get(`/api/users/explain?${params}&analyze=true`), true);
    await push("facets post", post("/api/users/facets", { columns: requests.facetColumns.filter((id) => visible.has(id)), filterModel: own.filterModel, quickFilter: own.quickFilter, search: requests.search }));
    if (hidden !== undefined) await push("hidden sort", post("/api/users", { ...own, sortModel: [{ colId: hidden.id, sort: "asc" }] }));
  }
  const facetIds = requests.facetColumns.filter((id) => visible.has(id));
  if (facetIds.length > 0) await push("facets get", get(`/api/users/facets?columns=${facetIds.join(",")}${requests.search === undefined ? "" : `&search=${encodeURIComponent(requests.search)}`}`));
  await push("search", get(`/api/users?q=${encodeURIComponent(requests.needle)}`));
  for (const spec of enums) {
    // every value of the declared list, and one that is on none (a 400 listing the role's values)
    for (const value of [...(table.specs.find((s) => s.id === spec.id)?.values ?? []), "no-such-value"]) {
      await push(`set ${spec.id}=${value}`, post("/api/users", { startRow: 0, endRow: 5, filterModel: { [spec.id]: { filterType: "set", values: [value] } } }));
    }
  }
  await push("bad body", post("/api/users", { startRow: -1 }));
  return out;
}

/** A random table, a role over it, the other table (differing only outside the role's view) and requests. */
const caseArb = tableArb.chain(({ table, records }) =>
  fc.record({
    table: fc.constant(table),
    records: fc.constant(records),
    inferred: fc.array(fc.boolean(), { minLength: table.specs.length, maxLength: table.specs.length }),
    role: roleArb(table, records),
    other: otherArb(table, records),
    requests: requestsArb(table, records),
  }),
);

type Case = typeof caseArb extends fc.Arbitrary<infer C> ? C : never;

/**
 * The case's two tables' records (the given one and the other, see {@link otherArb}), the table
 * (some enums marked inferred), or null when the other table's changes came into the view.
 */
function tablesOf({ table: given, records, inferred, role, other }: Case): { table: Table; records: TableRecord[]; changed: TableRecord[] } | null {
  // some enums marked as a build marks those it inferred: their lists then come from the role's rows
  const table: Table = { key: given.key, specs: given.specs.map((s, i) => (s.kind === "enum" && inferred[i] ? { ...s, inferred: true } : s)) };
  const columns = table.specs.filter((s) => s.id !== table.key);
  const make = (key: unknown, values: unknown[]): TableRecord => {
    const record: TableRecord = Object.create(null);
    for (const spec of table.specs) record[spec.id] = spec.id === table.key ? key : values[columns.indexOf(spec)];
    return { ...record };
  };
  const ids = role.columns === "*" ? null : new Set(role.columns);
  const filtered = new Set(Object.keys(role.model));
  const inView = new Set(oracleRows(records, table, { sortModel: [], filterModel: role.model }).map((r) => r[table.key]));
  const changed: TableRecord[] = [];
  records.forEach((r, i) => {
    const what = other.perRow[i];
    if (what === "keep") changed.push(r);
    else if (!inView.has(r[table.key])) {
      if (what !== "drop") changed.push(make(r[table.key], what));
    } else if (what === "drop") changed.push(r);
    else {
      // the role's row: its hidden columns that its filter does not read take the new values
      const replaced = make(r[table.key], what);
      const kept: TableRecord = { ...r };
      for (const spec of columns) if (ids !== null && !ids.has(spec.id) && !filtered.has(spec.id)) kept[spec.id] = replaced[spec.id];
      changed.push(kept);
    }
  });
  for (const a of other.added) if (!records.some((r) => r[table.key] === a.key)) changed.push(make(a.key, a.values));
  // rows added or changed outside may have come into the view: then the tables differ inside it
  if (visibleOf(table, records, role) !== visibleOf(table, changed, role)) return null;
  return { table, records: [...records], changed };
}

/** Each store with the id a snapshot of its data gets (the writer's checksum: another for other data). */
function engineOf(rows: TableRecord[], table: Table): Engine {
  return createEngine({ ...buildTableStore(rows, table), snapshotId: Bun.hash.xxHash64(JSON.stringify(rows)).toString(16) });
}

/** The live batch that turns `from` into `to` (same table): upserts of the rows new or changed, deletes of the rows gone. */
function batchBetween(table: Table, from: readonly TableRecord[], to: readonly TableRecord[]): ChangeBatch {
  const before = new Map(from.map((r) => [r[table.key], JSON.stringify(r)]));
  const after = new Set(to.map((r) => r[table.key]));
  const changes: Change[] = [];
  for (const r of to) if (before.get(r[table.key]) !== JSON.stringify(r)) changes.push({ op: "upsert", record: r });
  for (const r of from) if (!after.has(r[table.key])) changes.push({ op: "delete", key: r[table.key] as number | string });
  return { lsn: lsnText(0x2000), commitTime: 0, changes };
}

/**
 * The role's answers on the case's first table (a snapshot of its records) and on `other` made
 * from the two tables' records, compared; false when the case is left out (the other table's
 * changes reach into the view, or the role sees everything).
 */
async function sameAnswers(c: Case, other: (table: Table, records: TableRecord[], changed: TableRecord[]) => Engine): Promise<boolean> {
  const tables = tablesOf(c);
  if (tables === null) return false;
  const { table, records, changed } = tables;
  const one = engineOf(records, table);
  const grantOne = grantOf(c.role, one);
  if (grantOne.view.unrestricted) return false;
  const two = other(table, records, changed);
  const a = await answersOf(one, grantOne, table, c.requests);
  const b = await answersOf(two, grantOf(c.role, two), table, c.requests);
  expect(b).toEqual(a);
  return true;
}

describe("non-interference: a restricted role's answers depend only on its rows and columns", () => {
  test("every route, byte for byte but Date and X-Snapshot-Id, on two tables that differ only outside its view", async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        if (await sameAnswers(c, (table, _records, changed) => engineOf(changed, table))) compared++;
      }),
      { numRuns: 120 },
    );
    expect(compared).toBeGreaterThan(40);
  }, 240_000);

  test("over live batches: a batch that changes only rows and columns outside the view changes none of the role's answers", async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        // the same snapshot, then a batch outside the view applied to it, as a live replica serves it
        if (await sameAnswers(c, (table, records, changed) => applyChanges(engineOf(records, table), batchBetween(table, records, changed)))) compared++;
      }),
      { numRuns: 80 },
    );
    expect(compared).toBeGreaterThan(25);
  }, 240_000);
});
