/**
 * Tests of the oracle itself: literal expectations on a hand-written dataset, each worked out
 * by hand from docs/api.md ("Ordering", "Matching") and src/query/types.ts, then a few
 * self-consistency properties over the arbitraries (which also exercise the arbitraries).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { compileColumnModel } from "../../src/kinds/operators.ts";
import { KINDS } from "../../src/kinds/registry.ts";
import type { Predicate, Query, SortKey } from "../../src/query/types.ts";
import type { UserRecord } from "../../src/generate/record.ts";
import type { ColumnId } from "./oracle.ts";
import { SEED_SPECS } from "./table-store.ts";
import { queryArb, recordsArb } from "./arbitraries.ts";
import { naiveCompare, naiveQuery } from "./oracle.ts";

/** Twelve rows, deliberately not in id order. */
const ROWS: UserRecord[] = [
  { id: 7, name: "zoe", email: "", status: "inactive" },
  { id: 1, name: "alice", email: "alice.111@x", status: "active" },
  { id: 12, name: "frank", email: "f@x", status: "inactive" },
  { id: 2, name: "Alice", email: "alice.21@x", status: "inactive" },
  { id: 3, name: "José", email: "jose@x", status: "active" },
  { id: -3, name: "carl", email: "carl@x", status: "active" },
  { id: 4, name: "Émile", email: "emile@x", status: "inactive" },
  { id: 10, name: "Bob", email: "bob2@x", status: "inactive" },
  { id: 5, name: "eve", email: "eve@x", status: "active" },
  { id: 8, name: "", email: "nobody@x", status: "active" },
  { id: 9, name: "bob", email: "bob@x", status: "inactive" },
  { id: 6, name: "Ed", email: "ed@x", status: "active" },
];

/** Every id, ascending. */
const ALL = [-3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12];
const ACTIVE = [-3, 1, 3, 5, 6, 8];
const INACTIVE = [2, 4, 7, 9, 10, 12];

function query(partial: Partial<Query>): Query {
  return { filter: null, sort: [], offset: 0, limit: 100, ...partial };
}

function key(column: SortKey["column"], direction: SortKey["direction"], absolute = false): SortKey {
  return { column, direction, absolute };
}

function ids(partial: Partial<Query>): number[] {
  return naiveQuery(ROWS, query(partial)).rows.map((row) => row.id);
}

function filtered(filter: Predicate): number[] {
  return ids({ filter });
}

/** An AG Grid filter model on a column, compiled by the operator registry as a request's is. */
function model(column: ColumnId, m: Record<string, unknown>): Predicate {
  const spec = SEED_SPECS.find((c) => c.id === column);
  if (spec === undefined) throw new Error(column);
  const test = compileColumnModel(KINDS[spec.kind], spec, m, "", (_at, detail) => {
    throw new Error(detail);
  });
  if (test === null) throw new Error(`${JSON.stringify(m)} does not compile`);
  return { kind: "column", column, test };
}

const text = (column: ColumnId, type: string, filter: string): Predicate => model(column, { filterType: "text", type, filter });
const num = (type: string, filter?: number, filterTo?: number): Predicate => model("id", { filterType: "number", type, filter, filterTo });
const set = (column: ColumnId, values: (string | null)[]): Predicate => model(column, { filterType: "set", values });

describe("naiveQuery ordering", () => {
  test("no sort keys: id ascending", () => {
    expect(ids({})).toEqual(ALL);
  });

  test("id asc and desc", () => {
    expect(ids({ sort: [key("id", "asc")] })).toEqual(ALL);
    expect(ids({ sort: [key("id", "desc")] })).toEqual([12, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, -3]);
  });

  test("name asc: case- and accent-insensitive, ties by id asc, Émile among the e's", () => {
    expect(ids({ sort: [key("name", "asc")] })).toEqual([8, 1, 2, 9, 10, -3, 6, 4, 5, 12, 3, 7]);
  });

  test("name desc: the exact reverse, ties by id desc", () => {
    expect(ids({ sort: [key("name", "desc")] })).toEqual([7, 3, 12, 5, 4, 6, -3, 10, 9, 2, 1, 8]);
  });

  test("Émile sorts among the e's", () => {
    const startsWithE = text("name", "startsWith", "e");
    expect(ids({ filter: startsWithE, sort: [key("name", "asc")] })).toEqual([6, 4, 5]);
  });

  test("email asc: alice.21@x before alice.111@x (numeric digit runs), empty first", () => {
    expect(ids({ sort: [key("email", "asc")] })).toEqual([7, 2, 1, 9, 10, -3, 6, 4, 5, 12, 3, 8]);
    const alice = text("email", "startsWith", "alice");
    expect(ids({ filter: alice, sort: [key("email", "asc")] })).toEqual([2, 1]);
    expect(ids({ filter: alice, sort: [key("email", "desc")] })).toEqual([1, 2]);
  });

  test("ties: id asc for asc, id desc for desc", () => {
    const bobs = set("name", ["bob"]);
    expect(ids({ filter: bobs, sort: [key("name", "asc")] })).toEqual([9, 10]);
    expect(ids({ filter: bobs, sort: [key("name", "desc")] })).toEqual([10, 9]);
  });

  test("status: active before inactive, ties by id in the key's direction", () => {
    expect(ids({ sort: [key("status", "asc")] })).toEqual([...ACTIVE, ...INACTIVE]);
    expect(ids({ sort: [key("status", "desc")] })).toEqual([12, 10, 9, 7, 4, 2, 8, 6, 5, 3, 1, -3]);
  });

  test("multi-key: status asc, name desc (bob/Bob tie on both: last key desc, so id desc)", () => {
    expect(ids({ sort: [key("status", "asc"), key("name", "desc")] })).toEqual([3, 5, 6, -3, 1, 8, 7, 12, 4, 10, 9, 2]);
  });

  test("multi-key: name asc, status desc (alice/Alice split by status; bob/Bob by id desc)", () => {
    expect(ids({ sort: [key("name", "asc"), key("status", "desc")] })).toEqual([8, 2, 1, 10, 9, -3, 6, 4, 5, 12, 3, 7]);
  });

  test("multi-key: name desc, status asc (bob/Bob by id asc: the last key is asc)", () => {
    expect(ids({ sort: [key("name", "desc"), key("status", "asc")] })).toEqual([7, 3, 12, 5, 4, 6, -3, 9, 10, 1, 2, 8]);
  });

  test("absolute on id: by |id|, -3 before 3 ascending, the exact reverse descending", () => {
    expect(ids({ sort: [key("id", "asc", true)] })).toEqual([1, 2, -3, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    expect(ids({ sort: [key("id", "desc", true)] })).toEqual([12, 10, 9, 8, 7, 6, 5, 4, 3, -3, 2, 1]);
  });

  test("absolute is ignored on string columns", () => {
    expect(ids({ sort: [key("name", "asc", true)] })).toEqual([8, 1, 2, 9, 10, -3, 6, 4, 5, 12, 3, 7]);
  });
});

describe("naiveQuery text predicates", () => {
  test('"jose" contains-matches "José"', () => {
    expect(filtered(text("name", "contains", "jose"))).toEqual([3]);
  });

  test('"ALI" contains-matches "alice" and "Alice"', () => {
    expect(filtered(text("name", "contains", "ALI"))).toEqual([1, 2]);
  });

  test("the other ops", () => {
    expect(filtered(text("name", "equals", "emile"))).toEqual([4]);
    expect(filtered(text("name", "notEqual", "BOB"))).toEqual([-3, 1, 2, 3, 4, 5, 6, 7, 8, 12]);
    expect(filtered(text("name", "notContains", "b"))).toEqual([-3, 1, 2, 3, 4, 5, 6, 7, 8, 12]);
    expect(filtered(text("name", "startsWith", "E"))).toEqual([4, 5, 6]);
    expect(filtered(text("name", "endsWith", "E"))).toEqual([1, 2, 3, 4, 5, 7]);
    expect(filtered(text("name", "contains", ""))).toEqual(ALL);
    expect(filtered(text("name", "equals", ""))).toEqual([8]);
  });

  test("blank and notBlank", () => {
    expect(filtered(text("name", "blank", ""))).toEqual([8]);
    expect(filtered(text("email", "blank", ""))).toEqual([7]);
    expect(filtered(text("email", "notBlank", ""))).toEqual([-3, 1, 2, 3, 4, 5, 6, 8, 9, 10, 12]);
    expect(filtered(text("id", "blank", ""))).toEqual([]);
  });

  test("text on id compares String(id)", () => {
    expect(filtered(text("id", "contains", "1"))).toEqual([1, 10, 12]);
    expect(filtered(text("id", "equals", "-3"))).toEqual([-3]);
  });

  test("text on status compares the enum value", () => {
    expect(filtered(text("status", "contains", "act"))).toEqual(ALL);
    expect(filtered(text("status", "equals", "ACTIVE"))).toEqual(ACTIVE);
    expect(filtered(text("status", "contains", "in"))).toEqual(INACTIVE);
  });
});

describe("naiveQuery number predicates", () => {
  test("inRange is exclusive at both ends", () => {
    expect(filtered(num("inRange", 3, 9))).toEqual([4, 5, 6, 7, 8]);
    expect(filtered(num("inRange", -4, 2))).toEqual([-3, 1]);
    expect(filtered(num("inRange", 9, 3))).toEqual([]);
  });

  test("comparisons", () => {
    expect(filtered(num("equals", 12))).toEqual([12]);
    expect(filtered(num("notEqual", 1))).toEqual([-3, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    expect(filtered(num("lessThan", 1))).toEqual([-3]);
    expect(filtered(num("lessThanOrEqual", 2))).toEqual([-3, 1, 2]);
    expect(filtered(num("greaterThan", 9))).toEqual([10, 12]);
    expect(filtered(num("greaterThanOrEqual", 10))).toEqual([10, 12]);
  });

  test("blank matches nothing, notBlank everything", () => {
    expect(filtered(num("blank"))).toEqual([]);
    expect(filtered(num("notBlank"))).toEqual(ALL);
  });
});

describe("naiveQuery set predicates", () => {
  test("set on name: whole values, folded; null matches a blank name", () => {
    expect(filtered(set("name", ["BOB", "josé"]))).toEqual([3, 9, 10]);
    expect(filtered(set("name", ["bo"]))).toEqual([]);
    expect(filtered(set("name", [""]))).toEqual([8]);
    expect(filtered(set("name", [null]))).toEqual([8]);
  });

  test("set on email, id and status", () => {
    expect(filtered(set("email", ["F@X"]))).toEqual([12]);
    expect(filtered(set("id", ["3", "12.0"]))).toEqual([3, 12]);
    expect(filtered(set("status", ["INACTIVE"]))).toEqual(INACTIVE);
  });

  test("an empty set matches nothing", () => {
    expect(filtered(set("name", []))).toEqual([]);
  });

  test("status values", () => {
    expect(filtered(set("status", ["inactive"]))).toEqual(INACTIVE);
    expect(filtered(set("status", ["active", "inactive"]))).toEqual(ALL);
    expect(filtered(set("status", []))).toEqual([]);
  });

  test("and / or, nested", () => {
    expect(
      filtered({
        kind: "or",
        children: [text("name", "startsWith", "a"), num("lessThan", 0)],
      }),
    ).toEqual([-3, 1, 2]);
    expect(
      filtered({
        kind: "and",
        children: [set("status", ["active"]), text("name", "contains", "e")],
      }),
    ).toEqual([1, 3, 5, 6]);
    expect(
      filtered({
        kind: "or",
        children: [
          { kind: "and", children: [set("status", ["inactive"]), text("name", "startsWith", "b")] },
          num("equals", 3),
        ],
      }),
    ).toEqual([3, 9, 10]);
  });
});

describe("naiveQuery window", () => {
  const byName = [key("name", "asc")];

  test("a middle page and a last partial page", () => {
    expect(naiveQuery(ROWS, query({ sort: byName, offset: 2, limit: 3 })).rows.map((r) => r.id)).toEqual([2, 9, 10]);
    expect(ids({ sort: byName, offset: 10, limit: 5 })).toEqual([3, 7]);
    expect(naiveQuery(ROWS, query({ sort: byName, offset: 2, limit: 3 })).total).toBe(12);
  });

  test("a page past the end is empty with the true total", () => {
    expect(naiveQuery(ROWS, query({ offset: 12, limit: 10 }))).toEqual({ rows: [], total: 12 });
    expect(naiveQuery(ROWS, query({ offset: 1000, limit: 10 }))).toEqual({ rows: [], total: 12 });
    const ali = text("name", "contains", "ali");
    expect(naiveQuery(ROWS, query({ filter: ali, offset: 2, limit: 10 }))).toEqual({ rows: [], total: 2 });
  });

  test("limit 0 is empty with the true total", () => {
    expect(naiveQuery(ROWS, query({ limit: 0 }))).toEqual({ rows: [], total: 12 });
  });
});

describe("oracle self-consistency over the arbitraries", () => {
  const cases = recordsArb.chain((records) => fc.tuple(fc.constant(records), queryArb(records)));

  test("records have unique finite ids and enum statuses", () => {
    fc.assert(
      fc.property(recordsArb, (records) => {
        expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
        for (const r of records) {
          expect(Number.isFinite(r.id) && !Object.is(r.id, -0)).toBe(true);
          expect(r.status === "active" || r.status === "inactive").toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  test("the window is a slice of a strictly ordered full result", () => {
    fc.assert(
      fc.property(cases, ([records, q]) => {
        const full = naiveQuery(records, { ...q, offset: 0, limit: records.length });
        const page = naiveQuery(records, q);
        expect(page.total).toBe(full.total);
        expect(full.rows.length).toBe(full.total);
        expect(page.rows).toEqual(full.rows.slice(q.offset, q.offset + q.limit));
        for (let i = 1; i < full.rows.length; i++) {
          expect(naiveCompare(full.rows[i - 1], full.rows[i], q.sort)).toBeLessThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  test("one plain key descending is the exact reverse of ascending", () => {
    fc.assert(
      fc.property(cases, ([records, q]) => {
        const column = q.sort[0]?.column ?? "name";
        const all = { ...q, offset: 0, limit: records.length };
        const asc = naiveQuery(records, { ...all, sort: [key(column, "asc")] }).rows;
        const desc = naiveQuery(records, { ...all, sort: [key(column, "desc")] }).rows;
        expect(desc).toEqual([...asc].reverse());
      }),
      { numRuns: 200 },
    );
  });
});
