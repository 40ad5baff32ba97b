/**
 * The GET and POST parsers on every kind: what each kind's GET form and each AG Grid model
 * compile to (src/kinds), and the 400s docs/api.md "Filtering on any column" asks for; a text
 * key's GET form. Semantics against the naive oracle are in test/engine/table-property.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { ProblemError } from "../../src/query/errors.ts";
import { parseGetQuery } from "../../src/query/get.ts";
import { parsePostBody } from "../../src/query/post.ts";
import type { Schema } from "../../src/schema/kinds.ts";
import { SEED_SCHEMA, SEED_SPECS } from "../support/table-store.ts";

const DAY = 86_400_000;
const SCHEMA: Schema = {
  columns: [
    ...SEED_SPECS,
    { id: "created_at", kind: "datetime" },
    { id: "birthday", kind: "date" },
    { id: "role", kind: "enum", values: ["owner", "Admin", "member"] },
    { id: "age", kind: "number" },
    { id: "verified", kind: "boolean" },
    { id: "notes", kind: "text" },
    { id: "prefs", kind: "json" },
  ],
  key: "id",
  partition: "status",
};

/** The problem's error details, or a failure when the call does not throw one. */
function problems(f: () => unknown): string[] {
  try {
    f();
  } catch (error) {
    if (error instanceof ProblemError) return (error.errors ?? []).map((e) => `${"pointer" in e ? e.pointer : e.parameter}: ${e.detail}`);
    throw error;
  }
  throw new Error("no problem thrown");
}

const post = (filterModel: unknown, sortModel: unknown = []) => parsePostBody({ startRow: 0, endRow: 100, filterModel, sortModel }, 1000, SCHEMA).query;

describe("GET filter[col] on every kind", () => {
  test("number: a value, a range with either side empty, ',' alone no filter", () => {
    expect(parseGetQuery("filter[age]=42", 100, SCHEMA).query.filter).toEqual({ kind: "column", column: "age", test: { op: "range", lo: 42, loOpen: false, hi: 42, hiOpen: false, negate: false } });
    const r = parseGetQuery("filter[age]=18,", 100, SCHEMA);
    expect(r.query.filter).toEqual({ kind: "column", column: "age", test: { op: "range", lo: 18, loOpen: false, hi: Number.POSITIVE_INFINITY, hiOpen: false, negate: false } });
    expect(r.meta.filters).toEqual({ age: "18," });
    expect(parseGetQuery("filter[age]=,", 100, SCHEMA).query.filter).toBeNull();
    expect(problems(() => parseGetQuery("filter[age]=abc", 100, SCHEMA))).toEqual(['filter[age]: "abc" is not a finite number']);
  });

  test("date and datetime: a date-only value covers its UTC day; a date-time is an instant", () => {
    const day = Date.UTC(2024, 2, 1) / DAY;
    expect(parseGetQuery("filter[birthday]=2024-03-01", 100, SCHEMA).query.filter).toEqual({ kind: "column", column: "birthday", test: { op: "range", lo: day, loOpen: false, hi: day, hiOpen: false, negate: false } });
    expect(parseGetQuery("filter[created_at]=2024-03-01,2024-03-31", 100, SCHEMA).query.filter).toEqual({
      kind: "column",
      column: "created_at",
      test: { op: "range", lo: day * DAY, loOpen: false, hi: Date.UTC(2024, 3, 1), hiOpen: true, negate: false },
    });
    const r = parseGetQuery("filter[created_at]=2024-03-01T10:00:00%2B02:00", 100, SCHEMA);
    expect(r.query.filter).toEqual({ kind: "column", column: "created_at", test: { op: "range", lo: Date.UTC(2024, 2, 1, 8), loOpen: false, hi: Date.UTC(2024, 2, 1, 8), hiOpen: false, negate: false } });
    expect(r.meta.filters).toEqual({ created_at: "2024-03-01T08:00:00.000Z" });
    expect(problems(() => parseGetQuery("filter[birthday]=2024-02-30", 100, SCHEMA))[0]).toContain("is not a date");
  });

  test("enum and boolean: whole values folded, a comma list; a value the column cannot hold is a 400", () => {
    const r = parseGetQuery("filter[role]=admin,OWNER", 100, SCHEMA);
    expect(r.query.filter).toEqual({ kind: "column", column: "role", test: { op: "set", values: ["owner", "admin"], nulls: false } });
    expect(r.meta.filters).toEqual({ role: "owner,Admin" });
    expect(parseGetQuery("filter[verified]=TRUE", 100, SCHEMA).query.filter).toEqual({ kind: "column", column: "verified", test: { op: "set", values: ["true"], nulls: false } });
    expect(problems(() => parseGetQuery("filter[role]=boss", 100, SCHEMA))).toEqual(['filter[role]: "boss" is not a value of role; valid values: owner, Admin, member']);
    expect(problems(() => parseGetQuery("filter[verified]=yes", 100, SCHEMA))[0]).toContain('"yes" is not a value of verified');
  });

  test("text: a substring; json: a 400; unknown columns list the schema's", () => {
    expect(parseGetQuery("filter[notes]=Caf%C3%A9", 100, SCHEMA).query.filter).toEqual({ kind: "column", column: "notes", test: { op: "text", type: "contains", value: "Café" } });
    expect(problems(() => parseGetQuery("filter[prefs]=x", 100, SCHEMA))[0]).toContain("json");
    expect(problems(() => parseGetQuery("filter[nope]=x", 100, SCHEMA))[0]).toContain("valid columns: id, name, email, status, created_at, birthday, role, age, verified, notes, prefs");
  });

  test("sortBy any column but json", () => {
    expect(parseGetQuery("sortBy=created_at&sortOrder=desc", 100, SCHEMA).query.sort).toEqual([{ column: "created_at", direction: "desc", absolute: false }]);
    expect(problems(() => parseGetQuery("sortBy=prefs", 100, SCHEMA))).toEqual(['sortBy: column "prefs" is json: it is returned, never sorted']);
  });

  test("a schema of four columns knows only the four", () => {
    expect(problems(() => parseGetQuery("sortBy=age", 100, SEED_SCHEMA))[0]).toContain('unknown column "age"');
  });

  test("a text key takes whole values (a comma list, folded); any other text column a substring", () => {
    const keyed: Schema = { columns: [{ id: "user_id", kind: "text" }, { id: "notes", kind: "text" }], key: "user_id", partition: null };
    expect(parseGetQuery("filter[user_id]=3F2A-1,b ,,3f2a-1", 100, keyed).query.filter).toEqual({ kind: "column", column: "user_id", test: { op: "set", values: ["3f2a-1", "b"], nulls: false } });
    expect(parseGetQuery("filter[user_id]=3F2A-1,b ,,3f2a-1", 100, keyed).meta.filters).toEqual({ user_id: "3F2A-1,b" });
    expect(parseGetQuery("filter[notes]=a,b", 100, keyed).query.filter).toEqual({ kind: "column", column: "notes", test: { op: "text", type: "contains", value: "a,b" } });
    expect(problems(() => parseGetQuery("filter[user_id]=,,", 100, keyed))[0]).toContain("no value given");
  });
});

describe("POST models on every kind", () => {
  test("number filter: every type, inRange exclusive, blank as null", () => {
    const t = (model: object) => (post({ age: { filterType: "number", ...model } }).filter as { test: unknown }).test;
    expect(t({ type: "lessThan", filter: "30" })).toEqual({ op: "range", lo: Number.NEGATIVE_INFINITY, loOpen: false, hi: 30, hiOpen: true, negate: false });
    expect(t({ type: "inRange", filter: 10, filterTo: 20 })).toEqual({ op: "range", lo: 10, loOpen: true, hi: 20, hiOpen: true, negate: false });
    expect(t({ type: "notEqual", filter: 5 })).toEqual({ op: "range", lo: 5, loOpen: false, hi: 5, hiOpen: false, negate: true });
    expect(t({ type: "blank" })).toEqual({ op: "null", negate: false });
    expect(t({ filter: 7 })).toEqual({ op: "range", lo: 7, loOpen: false, hi: 7, hiOpen: false, negate: false });
  });

  test("date filter: UTC days on date and datetime columns", () => {
    const d = Date.UTC(2024, 2, 1) / DAY;
    const t = (column: string, model: object) => (post({ [column]: { filterType: "date", ...model } }).filter as { test: unknown }).test;
    expect(t("birthday", { type: "equals", dateFrom: "2024-03-01 00:00:00" })).toEqual({ op: "range", lo: d, loOpen: false, hi: d + 1, hiOpen: true, negate: false });
    expect(t("created_at", { type: "greaterThan", dateFrom: "2024-03-01" })).toEqual({ op: "range", lo: (d + 1) * DAY, loOpen: false, hi: Number.POSITIVE_INFINITY, hiOpen: false, negate: false });
    expect(t("created_at", { type: "inRange", dateFrom: "2024-03-01 00:00:00", dateTo: "2024-03-04 00:00:00" })).toEqual({ op: "range", lo: (d + 1) * DAY, loOpen: false, hi: (d + 3) * DAY, hiOpen: true, negate: false });
    expect(problems(() => post({ birthday: { filterType: "date", type: "lessThanOrEqual", dateFrom: "2024-03-01" } }))[0]).toContain("date filter type must be one of equals, notEqual, lessThan, greaterThan, inRange, blank, notBlank");
    expect(problems(() => post({ birthday: { filterType: "date", type: "equals", dateFrom: "March" } }))[0]).toContain("/filterModel/birthday/dateFrom");
  });

  test("set filter: folded values, null, refusals on enum, boolean and number columns", () => {
    expect(post({ role: { filterType: "set", values: ["ADMIN", null] } }).filter).toEqual({ kind: "column", column: "role", test: { op: "set", values: ["admin"], nulls: true } });
    expect(post({ age: { filterType: "set", values: ["1.50", 2] } }).filter).toEqual({ kind: "column", column: "age", test: { op: "set", values: ["1.5", "2"], nulls: false } });
    expect(post({ verified: { filterType: "set", values: [true] } }).filter).toEqual({ kind: "column", column: "verified", test: { op: "set", values: ["true"], nulls: false } });
    expect(problems(() => post({ role: { filterType: "set", values: ["boss"] } }))).toEqual(['/filterModel/role/values/0: "boss" is not a value of role; valid values: owner, Admin, member']);
    expect(problems(() => post({ age: { filterType: "set", values: ["x"] } }))).toEqual(['/filterModel/age/values/0: "x" is not a number']);
  });

  test("a model that does not fit its column's kind, and json, are 400s naming the column", () => {
    expect(problems(() => post({ notes: { filterType: "number", type: "equals", filter: 1 } }))[0]).toContain('a "number" filter does not fit column "notes" (text); it takes text, set');
    expect(problems(() => post({ age: { filterType: "date", type: "equals", dateFrom: "2024-01-01" } }))[0]).toContain('does not fit column "age" (number)');
    expect(problems(() => post({ prefs: { filterType: "text", type: "contains", filter: "a" } }))[0]).toContain("it is returned, never filtered");
    expect(problems(() => post({}, [{ colId: "prefs", sort: "asc" }]))).toEqual(['/sortModel/0/colId: column "prefs" is json: it is returned, never sorted']);
  });

  test("combined conditions on an added column", () => {
    const q = post({ age: { filterType: "number", operator: "OR", conditions: [{ filterType: "number", type: "lessThan", filter: 18 }, { filterType: "number", type: "blank" }] } });
    expect(q.filter).toEqual({
      kind: "or",
      children: [
        { kind: "column", column: "age", test: { op: "range", lo: Number.NEGATIVE_INFINITY, loOpen: false, hi: 18, hiOpen: true, negate: false } },
        { kind: "column", column: "age", test: { op: "null", negate: false } },
      ],
    });
  });
});
