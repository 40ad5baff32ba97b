/**
 * Facets within a scope (an access role's rows: docs/api.md "Access control"): the scope is
 * never dropped as a column's own filter, and a listed text value is written as the scope's
 * rows write it — the first of the role's rows holding it, never a row outside them (whose
 * spelling of a collator-equal value would tell of rows the role does not see) — with or
 * without a live replica's changes.
 */
import { describe, expect, test } from "bun:test";
import { applyChanges, createEngine } from "../../src/engine/execute.ts";
import { computeFacets } from "../../src/engine/facets.ts";
import { parseFacetsPost } from "../../src/query/facets.ts";
import { parsePostBody } from "../../src/query/post.ts";
import type { Predicate } from "../../src/query/types.ts";
import type { Table } from "../support/table-oracle.ts";
import { buildTableStore } from "../support/table-store.ts";

const TABLE: Table = {
  specs: [
    { id: "id", kind: "number" },
    { id: "name", kind: "text" },
    { id: "org", kind: "number" },
  ],
  key: "id",
};

// "Café", "cafe" and "CAFE" are one value under the collation; org 1 writes it first (key 1)
const RECORDS = [
  { id: 1, name: "Café", org: 1 },
  { id: 2, name: "cafe", org: 2 },
  { id: 3, name: "CAFE", org: 2 },
  { id: 4, name: "Zoë", org: 1 },
  { id: 5, name: "zoe", org: 2 },
  { id: 6, name: "bob", org: 2 },
];

/** The filter of org = `org`, as a role's filter compiles. */
function orgIs(org: number): Predicate {
  return parsePostBody({ filterModel: { org: { filterType: "number", type: "equals", filter: org } } }, 10, buildTableStore(RECORDS, TABLE).schema).query.filter as Predicate;
}

describe("facets within a scope", () => {
  test("a text value is written as the scope's first row holding it writes it", () => {
    const engine = createEngine(buildTableStore(RECORDS, TABLE));
    const query = parseFacetsPost({ columns: ["name"] }, 10, engine.store.schema);
    expect(computeFacets(engine, query).facets.name).toEqual({
      kind: "text",
      values: [
        { value: "Café", count: 3 },
        { value: "Zoë", count: 2 },
        { value: "bob", count: 1 },
      ],
      distinct: 3,
      nulls: 0,
    });
    expect(computeFacets(engine, { ...query, scope: orgIs(2) })).toEqual({
      facets: {
        name: {
          kind: "text",
          values: [
            { value: "cafe", count: 2 },
            { value: "bob", count: 1 },
            { value: "zoe", count: 1 },
          ],
          distinct: 3,
          nulls: 0,
        },
      },
      total: 4,
    });
  });

  test("the facet search reads the scope's spelling too", () => {
    const engine = createEngine(buildTableStore(RECORDS, TABLE));
    const query = { ...parseFacetsPost({ columns: ["name"], search: "zoe" }, 10, engine.store.schema), scope: orgIs(2) };
    expect(computeFacets(engine, query).facets.name).toEqual({ kind: "text", values: [{ value: "zoe", count: 1 }], distinct: 1, nulls: 0 });
  });

  test("the scope is no column's own filter: a facet of its column stays within it", () => {
    const engine = createEngine(buildTableStore(RECORDS, TABLE));
    const query = parseFacetsPost({ columns: ["org"], filterModel: { org: { filterType: "number", type: "lessThan", filter: 10 } } }, 10, engine.store.schema);
    expect(computeFacets(engine, { ...query, scope: orgIs(2) })).toEqual({ facets: { org: { kind: "number", min: 2, max: 2, nulls: 0 } }, total: 4 });
    expect(computeFacets(engine, query)).toEqual({ facets: { org: { kind: "number", min: 1, max: 2, nulls: 0 } }, total: 6 });
  });

  test("over a live replica's changes: a changed row outside the scope is never the one shown", () => {
    let engine = createEngine(buildTableStore(RECORDS, TABLE));
    engine = applyChanges(engine, {
      lsn: "0/10",
      commitTime: Date.now(),
      changes: [
        // a lower key writing the value its way, outside org 2
        { op: "upsert", record: { id: 0, name: "CAFÉ", org: 1 } },
        // a new spelling inside org 2, after its others
        { op: "upsert", record: { id: 9, name: "Bob", org: 2 } },
        { op: "delete", key: 2 },
      ],
    });
    const query = { ...parseFacetsPost({ columns: ["name"] }, 10, engine.store.schema), scope: orgIs(2) };
    expect(computeFacets(engine, query)).toEqual({
      facets: {
        name: {
          kind: "text",
          values: [
            { value: "bob", count: 2 },
            { value: "CAFE", count: 1 },
            { value: "zoe", count: 1 },
          ],
          distinct: 3,
          nulls: 0,
        },
      },
      total: 4,
    });
  });
});
