/**
 * The OpenAPI document agrees with what the server does (docs/api.md "The OpenAPI document"):
 * its AG Grid filter models are the operator registry's filter types and `type`s
 * (src/kinds/operators.ts `OPERATORS`), each column is offered exactly the filter types of its
 * kind (src/kinds/registry.ts `KINDS`), records and GET filters are described by the kinds, and
 * its paths are the route table's. Checked on a table of every kind keyed by text (no email, a
 * status of four values), with Redocly's strictest rules; the checker itself is shown to catch
 * a document that drifted from the registry.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import pino from "pino";
import { createEngine } from "../../src/engine/execute.ts";
import { routeTable } from "../../src/http/app.ts";
import type { FilterType } from "../../src/kinds/kind.ts";
import { OPERATORS } from "../../src/kinds/operators.ts";
import { KINDS } from "../../src/kinds/registry.ts";
import type { ColumnKind, Schema } from "../../src/schema/kinds.ts";
import { type TestServer, startTestServer } from "../support/server.ts";
import { type Table, buildTableStore } from "../support/table-store.ts";

/** A table of every kind, keyed by a text column, without the seed's email. */
const TABLE: Table = {
  key: "user_id",
  specs: [
    { id: "user_id", kind: "text" },
    { id: "name", kind: "text" },
    { id: "status", kind: "enum", values: ["active", "invited", "suspended", "deleted"] },
    { id: "logins", kind: "number" },
    { id: "born", kind: "date" },
    { id: "seen_at", kind: "datetime" },
    { id: "admin", kind: "boolean" },
    { id: "settings", kind: "json" },
  ],
};

const RECORDS = [
  { user_id: "0b7f3c1e-0000-4000-8000-000000000001", name: "Ana", status: "active", logins: 3, born: "1990-01-02", seen_at: "2024-05-01T10:00:00Z", admin: true, settings: { a: 1 } },
  { user_id: "0b7f3c1e-0000-4000-8000-000000000002", name: "Bo", status: "invited", logins: null, born: null, seen_at: null, admin: false, settings: null },
  { user_id: "0b7f3c1e-0000-4000-8000-000000000003", name: "Cy", status: "deleted", logins: -1, born: "2001-12-31", seen_at: "2023-01-01T00:00:00Z", admin: null, settings: [1] },
];

let srv: TestServer;
let doc: Record<string, any>;
beforeAll(async () => {
  srv = startTestServer(buildTableStore(RECORDS, TABLE));
  doc = (await (await fetch(`${srv.url}/openapi/json`)).json()) as Record<string, any>;
});
afterAll(() => srv.close());

/** The name a `$ref` to a schema points at. */
function refName(node: unknown): string | undefined {
  const ref = (node as { $ref?: string } | null)?.$ref;
  return ref?.startsWith("#/components/schemas/") ? ref.slice("#/components/schemas/".length) : undefined;
}

/** The filter types a list of schema nodes offers alone: each a `$ref` to a simple model (not a combined one), whose `filterType` enum names one. */
function offeredTypes(schemas: Record<string, any>, nodes: unknown[]): string[] {
  return nodes.flatMap((node) => {
    const name = refName(node);
    if (name === undefined || schemas[name]?.properties?.conditions !== undefined) return [];
    return schemas[name]?.properties?.filterType?.enum ?? [`(${name} has no filterType)`];
  });
}

/** Equal as sets, element order aside. */
function sameSet(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/**
 * Every way `document` disagrees with the operator registry and the kinds for the served
 * `schema`, one line each; empty when none.
 */
function registryDisagreements(document: Record<string, any>, schema: Schema): string[] {
  const out: string[] = [];
  const schemas: Record<string, any> = document.components?.schemas ?? {};
  const filterTypes = Object.keys(OPERATORS) as FilterType[];
  const modelOf = (type: string) => Object.entries(schemas).find(([, s]) => sameSet(s?.properties?.filterType?.enum ?? [], [type]) && s.properties.conditions === undefined);

  // one model per filter type, its `type` enum the operator's
  for (const filterType of filterTypes) {
    const found = modelOf(filterType);
    if (found === undefined) {
      out.push(`no model has filterType "${filterType}"`);
      continue;
    }
    const [name, model] = found;
    const types = OPERATORS[filterType].types;
    const documented: unknown[] | undefined = model.properties.type?.enum;
    if (types.length === 0 && documented !== undefined) out.push(`${name}: documents types ${JSON.stringify(documented)}; the operator takes none`);
    if (types.length > 0 && (documented === undefined || !sameSet(documented.filter((t) => t !== null), types))) {
      out.push(`${name}: types ${JSON.stringify(documented)}; the operator's are ${JSON.stringify(types)}`);
    }
    if (types.length > 0 && !String(model.properties.type?.description).includes(`\`${types[0]}\``)) out.push(`${name}: the default is not ${types[0]}`);
  }
  // no model of a filter type the registry lacks
  for (const [name, model] of Object.entries(schemas)) {
    for (const t of model?.properties?.filterType?.enum ?? []) if (!(filterTypes as string[]).includes(t)) out.push(`${name}: filterType "${t}" is not in the registry`);
  }
  // the models of any column: every filter type, and combined ones of them
  const anyColumn = offeredTypes(schemas, schemas.ColumnFilterModel?.oneOf ?? []);
  if (!sameSet(anyColumn, filterTypes)) out.push(`ColumnFilterModel offers ${JSON.stringify(anyColumn)}`);
  if (!sameSet(schemas.CombinedFilterModel?.properties?.filterType?.enum ?? [], filterTypes)) out.push("CombinedFilterModel's filterType is not every filter type");

  // per column: the filter types of its kind, the record's value schema, the GET filter, the sort
  const filterModel = schemas.FilterModel?.properties ?? {};
  const parameters: { name: string; description: string }[] = document.paths?.["/api/users"]?.get?.parameters ?? [];
  const sortable: string[] = schemas.ColumnId?.enum ?? [];
  for (const spec of schema.columns) {
    const kind = KINDS[spec.kind];
    const key = spec.id === schema.key;
    const entry = filterModel[spec.id];
    if (kind.filterTypes.length === 0) {
      if (entry !== undefined) out.push(`FilterModel lists ${spec.id} (${spec.kind}), which takes no filter`);
    } else if (entry === undefined) out.push(`FilterModel lacks ${spec.id} (${spec.kind})`);
    else {
      const kindModel = schemas[refName(entry.oneOf?.[0]) ?? ""];
      if (entry.oneOf?.[1]?.type !== "null") out.push(`FilterModel.${spec.id} is not nullable`);
      const simple = offeredTypes(schemas, kindModel?.oneOf ?? []);
      if (!sameSet(simple, kind.filterTypes)) out.push(`${spec.id} (${spec.kind}) is offered ${JSON.stringify(simple)}; the kind takes ${JSON.stringify(kind.filterTypes)}`);
      const combined = (kindModel?.oneOf ?? []).find((s: any) => s?.properties?.conditions !== undefined);
      const conditions = combined?.properties?.conditions?.items;
      const inCombined = offeredTypes(schemas, conditions?.oneOf ?? (conditions === undefined ? [] : [conditions]));
      const combinedType: unknown[] = combined?.properties?.filterType?.enum ?? [];
      if (!sameSet(inCombined, kind.filterTypes) || !sameSet(combinedType, kind.filterTypes)) {
        out.push(`${spec.id} (${spec.kind}) combines ${JSON.stringify(inCombined)} as filterType ${JSON.stringify(combinedType)}; the kind takes ${JSON.stringify(kind.filterTypes)}`);
      }
    }
    if (JSON.stringify(schemas.User?.properties?.[spec.id]) !== JSON.stringify(kind.jsonSchema(spec, key))) out.push(`User.${spec.id} is not the kind's value schema`);
    const form = kind.getFormDoc(key);
    const parameter = parameters.find((p) => p.name === `filter[${spec.id}]`);
    if (form === null && parameter !== undefined) out.push(`filter[${spec.id}] is documented; the kind takes none`);
    if (form !== null && !parameter?.description.endsWith(form)) out.push(`filter[${spec.id}] does not say the kind's form`);
    if (kind.sortable !== sortable.includes(spec.id)) out.push(`ColumnId ${kind.sortable ? "lacks" : "lists"} ${spec.id} (${spec.kind})`);
  }
  if (Object.keys(filterModel).some((id) => !schema.columns.some((c) => c.id === id))) out.push("FilterModel lists a column the schema lacks");
  if (!sameSet(schemas.ColumnKind?.enum ?? [], Object.keys(KINDS))) out.push("ColumnKind is not the registry's kinds");
  return out;
}

describe("the OpenAPI document and the registry", () => {
  test("agree on every filter type, operator type and column kind of the served table", () => {
    expect(registryDisagreements(doc, srv.server.engine().store.schema)).toEqual([]);
    // the table's kinds each have their model, and the json column none
    const schemas = doc.components.schemas;
    for (const kind of ["text", "enum", "number", "date", "datetime", "boolean"] as ColumnKind[]) expect(schemas[`${kind[0].toUpperCase()}${kind.slice(1)}ColumnFilterModel`]).toBeDefined();
    expect(Object.keys(schemas.FilterModel.properties)).toEqual(["user_id", "name", "status", "logins", "born", "seen_at", "admin"]);
    expect(schemas.User.required).toEqual(TABLE.specs.map((s) => s.id));
  });

  test("the checker catches a document that drifted from the registry", () => {
    const schema = srv.server.engine().store.schema;
    const drift = (change: (d: Record<string, any>) => void): string[] => {
      const copy = structuredClone(doc);
      change(copy);
      return registryDisagreements(copy, schema);
    };
    const s = (d: Record<string, any>) => d.components.schemas;
    // an operator type the document forgot
    expect(drift((d) => s(d).TextFilterModel.properties.type.enum.splice(s(d).TextFilterModel.properties.type.enum.indexOf("notBlank"), 1))).toEqual([
      'TextFilterModel: types ["contains","notContains","equals","notEqual","startsWith","endsWith","blank",null]; the operator\'s are ["contains","notContains","equals","notEqual","startsWith","endsWith","blank","notBlank"]',
    ]);
    // a number filter offered on a text column
    expect(drift((d) => s(d).TextColumnFilterModel.oneOf.unshift({ $ref: "#/components/schemas/NumberFilterModel" }))).toEqual([
      'user_id (text) is offered ["number","text","set"]; the kind takes ["text","set"]',
      'name (text) is offered ["number","text","set"]; the kind takes ["text","set"]',
    ]);
    // a date filter withdrawn from datetime columns, in the combined model only
    expect(drift((d) => (s(d).DatetimeColumnFilterModel.oneOf.at(-1).properties.filterType.enum = ["text", "set"]))).toEqual([
      'seen_at (datetime) combines ["text","date","set"] as filterType ["text","set"]; the kind takes ["text","date","set"]',
    ]);
    // a filter type the registry does not have
    expect(drift((d) => (s(d).SetFilterModel.properties.filterType.enum = ["multi"]))).toContain('no model has filterType "set"');
    // a value schema, a GET filter form, a sortable column
    expect(drift((d) => (s(d).User.properties.logins = { type: "integer" }))).toEqual(["User.logins is not the kind's value schema"]);
    expect(drift((d) => d.paths["/api/users"].get.parameters.splice(d.paths["/api/users"].get.parameters.findIndex((p: { name: string }) => p.name === "filter[born]"), 1))).toEqual([
      "filter[born] does not say the kind's form",
    ]);
    expect(drift((d) => s(d).ColumnId.enum.push("settings"))).toEqual(["ColumnId lists settings (json)"]);
    expect(drift((d) => (s(d).FilterModel.properties.settings = { oneOf: [{ $ref: "#/components/schemas/TextColumnFilterModel" }, { type: "null" }] }))).toEqual([
      "FilterModel lists settings (json), which takes no filter",
    ]);
  });

  test("its paths and methods are the route table's, each keyed route with the key's security and a 401", () => {
    const table = routeTable({ engine: () => createEngine(srv.server.engine().store), maxPageSize: 1000, logger: pino({ level: "silent" }), changes: srv.server.events });
    const documented = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented).toEqual(table.filter((r) => r.operation !== null).map((r) => `${r.method} ${r.path}`));
    for (const route of table) {
      if (route.operation === null) continue;
      const operation = doc.paths[route.path][route.method.toLowerCase()];
      expect({ route: route.path, security: operation.security, has401: "401" in operation.responses }).toEqual({
        route: route.path,
        security: route.keyed ? [{ apiKey: [] }, {}] : [],
        has401: route.keyed,
      });
    }
    // the routes the document leaves out are the pages, their files and the document itself
    expect(table.filter((r) => r.operation === null && !r.path.startsWith("/openapi") && r.path !== "/docs").map((r) => r.path)).toEqual([]);
  });

  test("explain takes the listing's parameters and body, plus analyze", () => {
    const get = doc.paths["/api/users/explain"].get;
    const listing = doc.paths["/api/users"].get;
    const names = (ps: { name: string }[]) => ps.map((p) => p.name);
    expect(names(get.parameters)).toEqual([...names(listing.parameters).filter((n) => n !== "If-None-Match"), "analyze", "If-None-Match"]);
    const schemas = doc.components.schemas;
    expect(schemas.ExplainRequest.properties).toEqual({ ...schemas.PostUsersRequest.properties, analyze: schemas.ExplainRequest.properties.analyze });
    expect(doc.paths["/api/users/explain"].post.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ExplainRequest" });
    expect(get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ExplainResponse" });
  });

  test("passes Redocly's recommended-strict rules", async () => {
    const config = await createConfig({ extends: ["recommended-strict"], rules: { "info-license": "off", "no-unused-components": "off" } } as never);
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: join(import.meta.dir, "openapi.json"), config });
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
  });

  test("what explain answers fits the document's ExplainResponse", async () => {
    const body = (await (await fetch(`${srv.url}/api/users/explain?filter[born]=1990-01-02&filter[logins]=0,&sortBy=seen_at&analyze=true`)).json()) as Record<string, any>;
    expect(body.query.filter).toEqual({
      kind: "and",
      children: [
        { kind: "column", column: "born", test: { op: "range", lo: "1990-01-02", loOpen: false, hi: "1990-01-02", hiOpen: false, negate: false } },
        { kind: "column", column: "logins", test: { op: "range", lo: 0, loOpen: false, negate: false } },
      ],
    });
    const step = doc.components.schemas.PlanStep;
    const check = (s: Record<string, unknown>) => {
      for (const required of step.required) expect(s[required]).toBeDefined();
      for (const key of Object.keys(s)) expect(Object.keys(step.properties)).toContain(key);
      for (const child of (s.children as Record<string, unknown>[] | undefined) ?? []) check(child);
    };
    check(body.plan);
    expect(Object.keys(body.query)).toEqual(doc.components.schemas.NormalizedQuery.required);
    expect(body.plan.rows).toBe(1);
  });
});
