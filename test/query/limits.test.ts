import { describe, expect, test } from "bun:test";
import { MAX_LISTED_ERRORS, ProblemError } from "../../src/query/errors.ts";
import { problemBody } from "../../src/service/responses.ts";
import { SEED_SCHEMA } from "../support/table-store.ts";
import { parseGetQuery } from "../../src/query/get.ts";
import { MAX_CONDITIONS_PER_COLUMN, MAX_PREDICATES, parsePostBody } from "../../src/query/post.ts";

/** The ProblemError a parse throws (fails the test when it does not throw one). */
function problemOf(parse: () => unknown): ProblemError {
  try {
    parse();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error("expected a ProblemError");
}

const text = (filter: string) => ({ filterType: "text", type: "contains", filter });

describe("POST filter limits (docs/api.md, HTTP envelope: limits)", () => {
  test("a filter value longer than 256 characters is refused, like GET's", () => {
    expect(parsePostBody({ filterModel: { name: text("a".repeat(256)) } }, 1000, SEED_SCHEMA).query.filter).toEqual({ kind: "column", column: "name", test: { op: "text", type: "contains", value: "a".repeat(256) } });
    const p = problemOf(() => parsePostBody({ filterModel: { name: text("a".repeat(257)) } }, 1000, SEED_SCHEMA));
    expect(p.code).toBe("BAD_BODY");
    expect(p.errors).toEqual([{ pointer: "/filterModel/name/filter", detail: "is 257 characters long; at most 256 are accepted" }]);
  });

  test("set values longer than 256 characters are refused", () => {
    const p = problemOf(() => parsePostBody({ filterModel: { email: { filterType: "set", values: ["ok", "x".repeat(300)] } } }, 1000, SEED_SCHEMA));
    expect(p.errors).toEqual([{ pointer: "/filterModel/email/values/1", detail: "is 300 characters long; at most 256 are accepted" }]);
  });

  test(`at most ${MAX_CONDITIONS_PER_COLUMN} conditions per column`, () => {
    const conditions = (n: number) => Array.from({ length: n }, (_, i) => ({ filterType: "number", type: "equals", filter: i }));
    expect(parsePostBody({ filterModel: { id: { filterType: "number", operator: "OR", conditions: conditions(16) } } }, 1000, SEED_SCHEMA).query.filter?.kind).toBe("or");
    const p = problemOf(() => parsePostBody({ filterModel: { id: { filterType: "number", operator: "OR", conditions: conditions(3500) } } }, 1000, SEED_SCHEMA));
    expect(p.errors).toEqual([{ pointer: "/filterModel/id/conditions", detail: "holds 3500 conditions; at most 16 per column are accepted" }]);
  });

  test(`at most ${MAX_PREDICATES} predicates in all: every column's ${MAX_CONDITIONS_PER_COLUMN} conditions still fit`, () => {
    // With the four columns, 4 x 16 = 64 is the most a model can hold: accepted.
    const conditions = (n: number) => Array.from({ length: n }, (_, i) => text(`v${i}`));
    const combined = { filterType: "text", operator: "OR", conditions: conditions(16) };
    const filter = parsePostBody({ filterModel: { name: combined, email: combined, status: combined, id: combined } }, 1000, SEED_SCHEMA).query.filter;
    expect(filter?.kind === "and" && filter.children.length).toBe(4);
  });

  test("an errors list holds at most 20 entries and counts the rest; the detail says so", () => {
    // 21,000 bad conditions: refused at once by the count, one entry
    const many = Array.from({ length: 21_000 }, () => ({ filterType: "text", type: "nope", filter: "x" }));
    const p = problemOf(() => parsePostBody({ filterModel: { name: { filterType: "text", operator: "OR", conditions: many } } }, 1000, SEED_SCHEMA));
    expect(p.errors.length).toBe(1);
    // 30 unknown columns: 30 errors found, 20 listed
    const columns = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`c${i}`, text("x")]));
    const q = problemOf(() => parsePostBody({ filterModel: columns }, 1000, SEED_SCHEMA));
    expect(q.errors.length).toBe(30);
    expect(q.detail.endsWith("; and 10 more")).toBe(true);
    expect(q.detail.match(/\/filterModel\/c\d+: /g)?.length).toBe(MAX_LISTED_ERRORS);
    const body = JSON.parse(problemBody(q.code, q.detail, q.errors));
    expect(body.errors.length).toBe(MAX_LISTED_ERRORS);
    expect(body.moreErrors).toBe(10);
    expect(body.errors[0]).toEqual({ pointer: "/filterModel/c0", detail: 'unknown column "c0"; valid columns: id, name, email, status' });
  });

  test("error messages never echo a long input in full", () => {
    const p = problemOf(() => parsePostBody({ sortModel: [{ colId: "x".repeat(10_000), sort: "asc" }] }, 1000, SEED_SCHEMA));
    expect(p.detail.length).toBeLessThan(300);
  });
});

describe("GET filter[id] (docs/api.md: a cleared range filter)", () => {
  test('"," alone is no filter; one bound is a half range', () => {
    expect(parseGetQuery("filter[id]=,", 1000, SEED_SCHEMA)).toEqual({ query: { filter: null, sort: [], offset: 0, limit: 10 }, page: 1, pageSize: 10, meta: {} });
    expect(parseGetQuery("filter%5Bid%5D=%2C&filter[name]=a", 1000, SEED_SCHEMA).meta).toEqual({ filters: { name: "a" } });
    expect(parseGetQuery("filter[id]=10,", 1000, SEED_SCHEMA).query.filter).toEqual({ kind: "column", column: "id", test: { op: "range", lo: 10, loOpen: false, hi: Number.POSITIVE_INFINITY, hiOpen: false, negate: false } });
  });
});

describe("numbers beyond a double and names of any length (never misreported, never echoed in full)", () => {
  test('startRow 1e400 (read as Infinity) is "a number beyond the range of a double", not null', () => {
    const p = problemOf(() => parsePostBody(JSON.parse('{"startRow": 1e400}'), 1000, SEED_SCHEMA));
    expect(p.errors).toEqual([{ pointer: "/startRow", detail: "must be an integer >= 0 (got a number beyond the range of a double)" }]);
  });

  test("filter[id]=1e-400 (which a double rounds to 0) is refused, never taken as 0", () => {
    const p = problemOf(() => parseGetQuery("filter[id]=1e-400", 1000, SEED_SCHEMA));
    expect(p.errors).toEqual([{ parameter: "filter[id]", detail: '"1e-400" is not a finite number' }]);
    expect(parseGetQuery("filter[id]=0e5", 1000, SEED_SCHEMA).meta.filters).toEqual({ id: "0" });
    expect(parseGetQuery("filter[id]=-0.000", 1000, SEED_SCHEMA).meta.filters).toEqual({ id: "0" });
  });

  test("a 64 KB column name is cut in the error, its parameter or pointer too", () => {
    const name = "x".repeat(64 * 1024);
    const get = problemOf(() => parseGetQuery(`filter[${name}]=a&sortBy=${name}`, 1000, SEED_SCHEMA));
    expect(JSON.stringify(get.errors).length).toBeLessThan(1000);
    const post = problemOf(() => parsePostBody({ filterModel: { [name]: text("a") } }, 1000, SEED_SCHEMA));
    expect(JSON.stringify(post.errors).length).toBeLessThan(1000);
    expect(post.detail.length).toBeLessThan(1000);
  });
});
