/**
 * Access roles' views (docs/api.md "Access control") against the naive oracle
 * (test/support/table-oracle.ts) on random tables of any shape, random policies and random
 * requests: a role sees the columns it lists (the key among them) and the rows its filter model
 * keeps (literal values, and values given by the credential's claims), and every answer —
 * listing (POST and GET), search, facets, export (NDJSON and CSV), schema, explain — equals the
 * oracle's answer over the role's rows, each record cut to the role's columns. A table of only
 * those rows and columns is all the role can learn: a search never matches through a hidden
 * column, and a request naming a hidden column is refused exactly as one naming a column that
 * does not exist. Some cases apply a live replica's change batches first, one after the other
 * (updates, deletes, inserts, key changes, a key changed twice in a batch: the changed rows are
 * in the role's rows exactly when their new values pass its filter, and their records are cut
 * too); then a role of every row and column sees the version (`<snapshotId>@<LSN>`) and a
 * restricted role the snapshot id alone, and the entity tag is never another role's, and is the
 * one before the last batch exactly when the batch changed none of a restricted role's rows.
 *
 * The requests go through the data routes' handlers (http/app.ts) with the role's grant, as the
 * envelope hands it to them; credentials and the envelope are tested over a socket in
 * test/http/access.test.ts.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import pino from "pino";
import type { Grant } from "../../src/access/control.ts";
import { parsePolicy } from "../../src/access/policy.ts";
import { type RoleView, compileView } from "../../src/access/view.ts";
import { type Engine, applyChanges, createEngine } from "../../src/engine/execute.ts";
import { dataHandlers } from "../../src/http/app.ts";
import { lsnText } from "../../src/live/changes.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { filterModelArb, filterable, needleArb, quickArb, simpleModel, sortModelArb, tableArb } from "../support/table-arbitraries.ts";
import { type Table, type TableRecord, oracleFacets, oracleGet, oracleRows } from "../support/table-oracle.ts";
import { buildTableStore } from "../support/table-store.ts";
import { applyToRecords, changesArb, written } from "../support/live-changes.ts";

const logger = pino({ level: "silent" });

/** A claim reference put in place of a simple model's value, and the claim that gives it back. */
interface ClaimedModel {
  /** The model as the policy writes it (a `{"claim": …}` where the value was). */
  policy: Record<string, unknown>;
  /** The model as the oracle reads it (the value in place). */
  oracle: Record<string, unknown>;
  claims: Record<string, unknown>;
}

/**
 * True when a claim may give `value` as it is (docs/api.md "Access control", claims): a finite
 * number for a number column, a string for a text, enum, date or date-time column, `"true"` or
 * `"false"` for a boolean column; each item of a whole `values` list. (A value a claim gives
 * converted, or refuses, is the claim tests' matter: test/access/claims.test.ts.)
 */
function claimable(spec: ColumnSpec, value: unknown): boolean {
  if (Array.isArray(value)) return value.every((item) => item !== null && claimable(spec, item));
  if (spec.kind === "number") return typeof value === "number" && Number.isFinite(value);
  if (spec.kind === "boolean") return value === "true" || value === "false";
  return typeof value === "string";
}

/** A simple model of the column with its `filter`, `dateFrom` or whole `values` given by a claim (when it has one a claim may give). */
function claimedModel(spec: ColumnSpec, records: readonly TableRecord[], table: Table): fc.Arbitrary<ClaimedModel> {
  return simpleModel(spec, records, table).map((model) => {
    const field = ["filter", "dateFrom", "values"].find((f) => model[f] !== undefined && model[f] !== null && claimable(spec, model[f]));
    if (field === undefined) return { policy: model, oracle: model, claims: {} };
    const name = `c_${spec.id}`;
    return { policy: { ...model, [field]: { claim: name } }, oracle: model, claims: { [name]: model[field] } };
  });
}

/** A role: the columns it sees (the key always), its filter model (some values from claims), its claims. */
function roleArb(table: Table, records: readonly TableRecord[]) {
  const others = table.specs.filter((s) => s.id !== table.key).map((s) => s.id);
  const columns = fc.oneof({ weight: 1, arbitrary: fc.constant<"*">("*") }, { weight: 3, arbitrary: fc.subarray(others).map((ids) => [table.key, ...ids]) });
  const claimed = fc
    .subarray(filterable(table), { maxLength: Math.min(2, filterable(table).length) })
    .chain((specs) => fc.tuple(...specs.map((s) => claimedModel(s, records, table).map((m) => [s.id, m] as const))));
  return fc.record({ columns, literal: filterModelArb(records, table), claimed }).map(({ columns, literal, claimed }) => {
    const policyModel: Record<string, unknown> = { ...literal };
    const oracleModel: Record<string, Record<string, unknown>> = { ...literal };
    const claims: Record<string, unknown> = {};
    for (const [id, m] of claimed) {
      policyModel[id] = m.policy;
      oracleModel[id] = m.oracle;
      Object.assign(claims, m.claims);
    }
    return { columns, policyModel, oracleModel, claims };
  });
}

/** The view of a role over a store: the policy written as a file would hold it, checked, compiled with the claims. */
function viewOf(role: { columns: "*" | string[]; policyModel: Record<string, unknown>; claims: Record<string, unknown> }, engine: Engine): Grant {
  const text = JSON.stringify({ jwt: { secret: "s".repeat(40) }, roles: { tenant: { columns: role.columns, filterModel: role.policyModel } } });
  const policy = parsePolicy(text, "policy.json", engine.store.schema, { dir: "." });
  const spec = policy.roles.get("tenant");
  if (spec === undefined) throw new Error("the role was not kept");
  const view = compileView(spec, role.claims, engine.store.schema, policy.id);
  if ("reason" in view) throw new Error(`no view: ${view.detail}`);
  return { principal: { role: spec, claims: role.claims }, view: view as RoleView };
}

/** The oracle's table for a role: its rows (the role's filter model), its columns, records cut to them. */
function roleTable(table: Table, records: readonly TableRecord[], view: RoleView, model: Record<string, Record<string, unknown>>): { table: Table; records: TableRecord[] } {
  const ids = view.schema.columns.map((c) => c.id);
  const rows = oracleRows(records, table, { sortModel: [], filterModel: model });
  const cut = (r: TableRecord): TableRecord => {
    const out: TableRecord = Object.create(null);
    for (const id of ids) out[id] = r[id] ?? null;
    return { ...out };
  };
  return { table: { specs: table.specs.filter((s) => ids.includes(s.id)), key: table.key }, records: rows.map(cut) };
}

/** What a handler answered: status and parsed body (text for CSV). */
async function answered(response: Response | Promise<Response>): Promise<{ status: number; body: unknown; text: string; headers: Headers }> {
  const r = await response;
  const text = await r.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: r.status, body, text, headers: r.headers };
}

/** Every column an explain answer names: each `column`, and each `columns` list's ids. */
function namedColumns(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) namedColumns(item, out);
  else if (typeof value === "object" && value !== null) {
    for (const [key, member] of Object.entries(value)) {
      if (key === "column" && typeof member === "string") out.push(member);
      else if (key === "columns" && Array.isArray(member)) out.push(...member.filter((m): m is string => typeof m === "string"));
      else namedColumns(member, out);
    }
  }
  return out;
}

const post = (path: string, body: unknown) => new Request(`http://127.0.0.1${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const get = (path: string) => new Request(`http://127.0.0.1${path}`);
const conditional = (path: string, etag: string) => new Request(`http://127.0.0.1${path}`, { headers: { "if-none-match": etag } });

const caseArb = tableArb.chain(({ table, records }) =>
  fc.record({
    table: fc.constant(table),
    records: fc.constant(records),
    role: roleArb(table, records),
    live: fc.option(fc.array(changesArb(table), { minLength: 1, maxLength: 3 }), { freq: 3 }),
    bodies: fc.array(
      fc.record({ startRow: fc.integer({ min: 0, max: 30 }), size: fc.integer({ min: 1, max: 25 }), sortModel: sortModelArb(table), filterModel: filterModelArb(records, table), quickFilter: quickArb(records, table) }),
      { minLength: 1, maxLength: 4 },
    ),
    facetColumns: fc.uniqueArray(fc.constantFrom(...filterable(table).map((s) => s.id)), { minLength: 1, maxLength: 3 }),
    search: fc.option(fc.constantFrom("a", "z", "1", "é", "2024"), { nil: undefined }),
    needle: needleArb(records, table),
  }),
);

describe("a role's view against the oracle over its rows and columns", () => {
  test("listing, search, facets, export, schema and explain; a hidden column is an unknown one", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ table, records, role, live, bodies, facetColumns, search, needle }) => {
        const rows = records.map((r) => ({ ...r }));
        let engine = createEngine(buildTableStore(rows, table));
        // the version before the last batch, to show its tags are not the last one's
        let before: Engine | null = null;
        let rowsBefore: TableRecord[] = [];
        let lsn = 0x100;
        // the records the batches inserted or updated
        const changed: TableRecord[] = [];
        for (const batch of live ?? []) {
          before = engine;
          rowsBefore = rows.map((r) => ({ ...r }));
          const changes = applyToRecords(table, rows, batch);
          for (const c of changes) if (c.op === "upsert") changed.push(c.record as TableRecord);
          engine = applyChanges(engine, { lsn: lsnText((lsn += 0x100)), commitTime: Date.now(), changes });
        }
        const grant = viewOf(role, engine);
        const view = grant.view;
        // X-Snapshot-Id: the version for a role of every row and column, the snapshot id without
        // the LSN for a restricted one (other tenants' writes are not its business)
        const version = live === null || !view.unrestricted ? engine.store.snapshotId : `${engine.store.snapshotId}@${lsnText(lsn)}`;
        const seen = roleTable(table, rows, view, role.oracleModel);
        const visible = new Set(view.schema.columns.map((c) => c.id));
        const ids = view.schema.columns.map((c) => c.id);
        const handlers = dataHandlers({ engine: () => engine, maxPageSize: 1000, logger });

        // the schema: the role's columns in schema order, and the rows it sees (a live replica's too)
        const schema = await answered(handlers.schema(get("/api/users/schema"), grant));
        expect(schema.status).toBe(200);
        expect((schema.body as { columns: ColumnSpec[] }).columns).toEqual(table.specs.filter((s) => visible.has(s.id)).map((s) => ({ ...s })));
        expect((schema.body as { rows: number; snapshotId: string }).rows).toBe(seen.records.length);
        expect((schema.body as { snapshotId?: string }).snapshotId).toBe(view.unrestricted ? version : undefined);
        expect(schema.headers.get("x-snapshot-id")).toBe(version);

        // entity tags: the version's and the role's; another role's tag (every row and column,
        // the same request and version) never answers 304, nor the tag before the last batch
        const admin = viewOf({ columns: "*", policyModel: {}, claims: {} }, engine);
        const listing = "/api/users?page=1&pageSize=5";
        const mine = (await handlers.get(get(listing), grant)) as Response;
        const theirs = (await handlers.get(get(listing), admin)) as Response;
        expect(mine.headers.get("x-snapshot-id")).toBe(version);
        const tag = mine.headers.get("etag") as string;
        if (!view.unrestricted) {
          // (a role of every row and column is the same view: its answers and tags may be shared)
          expect(tag).not.toBe(theirs.headers.get("etag"));
          expect(((await handlers.get(conditional(listing, theirs.headers.get("etag") as string), grant)) as Response).status).toBe(200);
        }
        expect(((await handlers.get(conditional(listing, tag), grant)) as Response).status).toBe(304);
        if (before !== null) {
          // the tag before the last batch: another for a role of every row and column; for a
          // restricted role, the same exactly when the batch changed none of the rows it sees
          const earlier = before;
          const old = (await dataHandlers({ engine: () => earlier, maxPageSize: 1000, logger }).get(get(listing), grant)) as Response;
          const seenBefore = roleTable(table, rowsBefore, view, role.oracleModel);
          const sorted = (records: TableRecord[]) => records.map((r) => JSON.stringify(written(seen.table, r))).sort();
          const unchanged = !view.unrestricted && JSON.stringify(sorted(seenBefore.records)) === JSON.stringify(sorted(seen.records));
          expect(old.headers.get("etag") === tag).toBe(unchanged);
          expect(((await handlers.get(conditional(listing, old.headers.get("etag") as string), grant)) as Response).status).toBe(unchanged ? 304 : 200);
        }

        for (const b of bodies) {
          // the request names only what the role sees: answered as the oracle over its rows and columns
          const own = {
            startRow: b.startRow,
            endRow: b.startRow + b.size,
            sortModel: b.sortModel.filter((k) => visible.has(k.colId)),
            filterModel: Object.fromEntries(Object.entries(b.filterModel).filter(([id]) => visible.has(id))),
            quickFilter: b.quickFilter,
          };
          const page = await answered(handlers.post(post("/api/users", own), grant));
          expect(page.status).toBe(200);
          const expected = oracleRows(seen.records, seen.table, own);
          const data = (page.body as { data: TableRecord[] }).data;
          expect({ data, total: (page.body as { total: number }).total }).toEqual({ data: expected.slice(own.startRow, own.endRow).map((r) => written(seen.table, r)), total: expected.length });
          for (const record of data) expect(Object.keys(record)).toEqual(ids);

          // the same through GET: the search, a sort, a page
          const sortBy = own.sortModel[0]?.colId;
          const params = new URLSearchParams({ page: "1", pageSize: String(b.size) });
          if (sortBy !== undefined) params.set("sortBy", sortBy);
          if (own.quickFilter !== undefined) params.set("q", own.quickFilter);
          const listed = await answered(handlers.get(get(`/api/users?${params}`), grant));
          expect(listed.status).toBe(200);
          const oracle = oracleGet(seen.records, seen.table, { filters: {}, q: own.quickFilter, sortBy, sortOrder: "asc", page: 1, pageSize: b.size });
          expect({ keys: (listed.body as { data: TableRecord[] }).data.map((r) => r[table.key]), total: (listed.body as { total: number }).total }).toEqual(oracle);

          // every matching row, exported
          const ndjson = await answered(handlers.exportPost(post("/api/users/export", { format: "ndjson", sortModel: own.sortModel, filterModel: own.filterModel, quickFilter: own.quickFilter }), grant));
          expect(ndjson.status).toBe(200);
          const lines = ndjson.text.split("\n").filter((l) => l !== "");
          expect(lines.map((l) => JSON.parse(l))).toEqual(expected.map((r) => written(seen.table, r)));
          const csv = await answered(handlers.exportPost(post("/api/users/export", { format: "csv", sortModel: own.sortModel, filterModel: own.filterModel }), grant));
          expect(csv.text.split("\r\n")[0]).toBe(ids.join(","));
          expect(csv.text.split("\r\n").length - 2).toBe(oracleRows(seen.records, seen.table, { ...own, quickFilter: undefined }).length);

          // explain: the role's request, its search among its columns; a role limited to some rows sees the root alone
          const explained = await answered(handlers.explainPost(post("/api/users/explain", { ...own, analyze: true }), grant));
          expect(explained.status).toBe(200);
          const plan = (explained.body as { plan: { rows: number; children?: unknown[] } }).plan;
          expect(plan.rows).toBe(Math.max(0, Math.min(own.endRow, expected.length) - own.startRow));
          if (view.filter !== null) expect(plan.children).toBeUndefined();
          expect(namedColumns(explained.body).filter((id) => !visible.has(id))).toEqual([]);

          // a hidden column in a sort, a filter or a facet: exactly an unknown column's answer
          const hidden = table.specs.find((s) => !visible.has(s.id) && s.kind !== "json");
          if (hidden !== undefined) {
            const asHidden = await answered(handlers.post(post("/api/users", { ...own, sortModel: [{ colId: hidden.id, sort: "asc" }] }), grant));
            const asUnknown = await answered(handlers.post(post("/api/users", { ...own, sortModel: [{ colId: "no_such_column", sort: "asc" }] }), grant));
            expect(asHidden.status).toBe(400);
            expect(asHidden.text).toBe(asUnknown.text.replaceAll("no_such_column", hidden.id));
            expect((asUnknown.body as { detail: string }).detail).toEndWith(`valid columns: ${ids.join(", ")}`);
            const filtered = await answered(handlers.get(get(`/api/users?filter[${encodeURIComponent(hidden.id)}]=${encodeURIComponent(needle || "x")}`), grant));
            const unknownFilter = await answered(handlers.get(get(`/api/users?filter[no_such_column]=${encodeURIComponent(needle || "x")}`), grant));
            expect(filtered.status).toBe(400);
            expect(filtered.text).toBe(unknownFilter.text.replaceAll("no_such_column", hidden.id));
            const faceted = await answered(handlers.facetsPost(post("/api/users/facets", { columns: [hidden.id] }), grant));
            expect(faceted.status).toBe(400);
            expect((faceted.body as { detail: string }).detail).toEndWith(`valid columns: ${ids.join(", ")}`);
          }
        }

        // a search for a changed row's value of a column the role does not see finds rows only
        // through the columns it sees
        const hiddenSearchable = table.specs.filter((s) => !visible.has(s.id) && (s.kind === "text" || s.kind === "enum"));
        for (const record of changed.slice(-4)) {
          for (const spec of hiddenSearchable) {
            const value = record[spec.id];
            if (typeof value !== "string" || value.trim() === "") continue;
            const q = value.trim();
            const listed = await answered(handlers.get(get(`/api/users?${new URLSearchParams({ page: "1", pageSize: "50", q })}`), grant));
            expect(listed.status).toBe(200);
            const oracle = oracleGet(seen.records, seen.table, { filters: {}, q, sortBy: undefined, sortOrder: "asc", page: 1, pageSize: 50 });
            expect({ keys: (listed.body as { data: TableRecord[] }).data.map((r) => r[table.key]), total: (listed.body as { total: number }).total }).toEqual(oracle);
          }
        }

        // facets of the columns it sees, counted over its rows, with its search
        const columns = facetColumns.filter((c) => visible.has(c));
        if (columns.length > 0) {
          const body = { columns, filterModel: Object.fromEntries(Object.entries(bodies[0].filterModel).filter(([id]) => visible.has(id))), quickFilter: bodies[0].quickFilter, search, limit: 5 };
          const facets = await answered(handlers.facetsPost(post("/api/users/facets", body), grant));
          expect(facets.status).toBe(200);
          expect(facets.body).toEqual(oracleFacets(seen.records, seen.table, body));
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 120) },
    );
  }, 600_000);
});
