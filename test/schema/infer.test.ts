import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { emptyProfile, inferKeyKind, inferKind, profileJson, profileText, profileUtf8 } from "../../src/schema/infer.ts";
import { type ColumnSpec, SchemaError, parseSchemaFile } from "../../src/schema/kinds.ts";

/** The kind inferred from JSON values, over `rows` rows. */
function fromJson(values: unknown[], rows = values.length) {
  const profile = emptyProfile();
  for (const v of values) profileJson(profile, v);
  return inferKind(profile, rows);
}

/** The kind inferred from CSV fields, each with whether it was quoted. */
function fromCsvQuoted(values: [string, boolean][], rows = values.length) {
  const profile = emptyProfile();
  for (const [v, quoted] of values) profileText(profile, v, quoted);
  return inferKind(profile, rows);
}

/** The kind inferred from CSV fields. */
function fromCsv(values: string[], rows = values.length) {
  const profile = emptyProfile();
  for (const v of values) profileText(profile, v);
  return inferKind(profile, rows);
}

describe("kind inference (docs/api.md)", () => {
  test("JSON values: each kind from its values, nulls ignored", () => {
    expect(fromJson([1, 2.5, null, -3])).toEqual({ kind: "number" });
    expect(fromJson(["2024-01-01", null, "1999-12-31"])).toEqual({ kind: "date" });
    expect(fromJson(["2024-01-01T10:00:00Z", "2024-01-01 10:00:00+02:00"])).toEqual({ kind: "datetime" });
    expect(fromJson([true, false, null])).toEqual({ kind: "boolean" });
    expect(fromJson([{ a: 1 }, [1, 2], "x", 3])).toEqual({ kind: "json" });
    expect(fromJson([null, undefined])).toEqual({ kind: "text" });
  });

  test("strings: enum with at most 32 distinct values and one per 10 rows, in collation order; else text", () => {
    const roles = Array.from({ length: 30 }, (_, i) => ["viewer", "Admin", "member"][i % 3]);
    expect(fromJson(roles)).toEqual({ kind: "enum", values: ["Admin", "member", "viewer"], inferred: true });
    // 3 distinct values need 30 rows
    expect(fromJson(roles.slice(0, 29))).toEqual({ kind: "text" });
    const many = Array.from({ length: 1000 }, (_, i) => `v${i % 33}`);
    expect(fromJson(many)).toEqual({ kind: "text" });
    const thirtyTwo = Array.from({ length: 1000 }, (_, i) => `v${i % 32}`);
    expect(fromJson(thirtyTwo).kind).toBe("enum");
    expect(fromJson(thirtyTwo).values?.slice(0, 4)).toEqual(["v0", "v1", "v2", "v3"]);
    expect(fromJson(thirtyTwo).values?.at(-1)).toBe("v31");
  });

  test("JSON types are kept: the string \"42\" is a string, a number among strings makes text", () => {
    expect(fromJson(Array.from({ length: 20 }, () => "42"))).toEqual({ kind: "enum", values: ["42"], inferred: true });
    expect(fromJson(["a", 1, "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w"]).kind).toBe("text");
  });

  test("CSV fields: classified by syntax; the empty field is null", () => {
    expect(fromCsv(["1", "2.5", "", "-3e2"])).toEqual({ kind: "number" });
    expect(fromCsv(["TRUE", "false", ""])).toEqual({ kind: "boolean" });
    expect(fromCsv(["2024-01-01", ""])).toEqual({ kind: "date" });
    expect(fromCsv(["2024-01-01 10:00:00", "2024-01-01T10:00Z"])).toEqual({ kind: "datetime" });
    expect(fromCsv(['{"a":1}', "[1]", "2"])).toEqual({ kind: "json" });
    // a plain string cannot be kept as JSON: text
    expect(fromCsv(['{"a":1}', "hello"])).toEqual({ kind: "text" });
    expect(fromCsv(["0x10", "1", "2"])).toEqual({ kind: "text" });
  });
});

describe("inference details of any table", () => {
  test("CSV: a quoted empty field is the empty string, which no enum holds: text", () => {
    const profile = emptyProfile();
    for (let i = 0; i < 40; i++) profileText(profile, i % 2 ? "active" : "invited");
    expect(inferKind(profile, 41)).toEqual({ kind: "enum", values: ["active", "invited"], inferred: true });
    profileText(profile, "", false);
    expect(profile.nulls).toBe(1);
    expect(inferKind(profile, 41)).toEqual({ kind: "enum", values: ["active", "invited"], inferred: true });
    profileText(profile, "", true);
    expect(inferKind(profile, 42)).toEqual({ kind: "text" });
    // "" among numbers: a string, so text
    expect(fromCsvQuoted([["1", false], ["", true], ["2", false]])).toEqual({ kind: "text" });
  });

  test("a status of active, invited, suspended, deleted is an enum of those, in collation order", () => {
    const statuses = Array.from({ length: 40 }, (_, i) => ["suspended", "active", "deleted", "invited"][i % 4]);
    expect(fromJson(statuses)).toEqual({ kind: "enum", values: ["active", "deleted", "invited", "suspended"], inferred: true });
  });

  test("the key's kind: number when every value is one, else text", () => {
    const key = (values: unknown[]) => {
      const profile = emptyProfile();
      for (const v of values) profileJson(profile, v);
      return inferKeyKind(profile);
    };
    expect(key([1, 2.5, -3])).toBe("number");
    expect(key(["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"])).toBe("text");
    expect(key([1, "2"])).toBe("text");
    expect(key([])).toBe("text");
    const csv = emptyProfile();
    for (const v of ["1", "1e3", "-0"]) profileText(csv, v);
    expect(inferKeyKind(csv)).toBe("number");
    profileText(csv, "0x10");
    expect(inferKeyKind(csv)).toBe("text");
  });

  test("profileUtf8 counts a string's bytes exactly as profileJson counts the string", () => {
    const encoder = new TextEncoder();
    const strings = fc.oneof(
      fc.string({ unit: "binary", maxLength: 30 }).filter((s) => s.isWellFormed()),
      fc.date({ noInvalidDate: true, min: new Date(Date.UTC(0, 0, 1)), max: new Date(Date.UTC(9999, 11, 31)) }).map((d) => d.toISOString()),
      fc.date({ noInvalidDate: true, min: new Date(Date.UTC(0, 0, 1)), max: new Date(Date.UTC(9999, 11, 31)) }).map((d) => d.toISOString().slice(0, 10)),
      fc.constantFrom("2024-02-30", "2024-01-01 10:00:00+02", "2024-01-01T10:00:00.123456Z", "2024-01-01T10:00:00+00:00", "2024-13-01", "x", "", "é"),
    );
    fc.assert(
      fc.property(fc.array(strings, { maxLength: 50 }), (values) => {
        const a = emptyProfile();
        const b = emptyProfile();
        const parsedA: number[] = [];
        const parsedB: number[] = [];
        for (const v of values) {
          parsedA.push(profileJson(a, v));
          const bytes = encoder.encode(`xx${v}yy`);
          parsedB.push(profileUtf8(b, bytes, 2, bytes.length - 2));
        }
        expect(parsedB).toEqual(parsedA);
        const { distinctUtf8: _a, lastDistinct: _la, ...restA } = a;
        const { distinctUtf8: _b, lastDistinct: _lb, ...restB } = b;
        expect(restB).toEqual(restA);
        expect(inferKind(b, values.length * 10)).toEqual(inferKind(a, values.length * 10));
      }),
      { numRuns: 300 },
    );
  });
});

describe("schema files", () => {
  test("any columns, in file order, and the key", () => {
    const columns: ColumnSpec[] = [
      { id: "created_at", kind: "datetime" },
      { id: "status", kind: "enum", values: ["active", "invited", "suspended", "deleted"] },
      { id: "email", kind: "json" },
      { id: "user_id", kind: "text" },
    ];
    expect(parseSchemaFile({ columns })).toEqual({ columns });
    expect(parseSchemaFile({ key: "user_id", columns })).toEqual({ key: "user_id", columns });
    expect(parseSchemaFile({ key: "id", columns: [] })).toEqual({ key: "id", columns: [] });
  });

  test("each problem refused with its reason", () => {
    const cases: [unknown, string][] = [
      [[], 'a schema file is a JSON object {"key"?: "…", "columns": [{"id": …, "kind": …}, …]}'],
      [{ columns: [], colums: [] }, 'a schema file has the members "key" and "columns" only (got "colums")'],
      [{ key: "user id", columns: [] }, 'the key "user id" must be a column id ([A-Za-z_][A-Za-z0-9_]{0,63})'],
      [{ key: 7, columns: [] }, "the key 7 must be a column id ([A-Za-z_][A-Za-z0-9_]{0,63})"],
      [{ columns: [{ id: "1x", kind: "text" }] }, 'columns[0]: the id "1x" must match [A-Za-z_][A-Za-z0-9_]{0,63}'],
      [{ columns: [{ id: "a", kind: "string" }] }, 'columns[0]: column "a" has kind "string"; kinds are number, text, enum, date, datetime, boolean, json'],
      [{ columns: [{ id: "a", kind: "enum" }] }, 'columns[0]: enum column "a" needs a non-empty "values" list'],
      [{ columns: [{ id: "a", kind: "enum", values: ["x", "x"] }] }, 'columns[0]: enum column "a" lists "x" twice'],
      [{ columns: [{ id: "a", kind: "enum", values: ["x", ""] }] }, 'columns[0]: enum column "a" has a value ""; values are non-empty strings'],
      [{ columns: [{ id: "a", kind: "text", values: ["x"] }] }, 'columns[0]: only enum columns have "values" ("a" is text)'],
      [{ columns: [{ id: "a", kind: "text" }, { id: "a", kind: "number" }] }, 'columns[1]: column "a" is listed twice'],
      [{ key: "k", columns: [{ id: "k", kind: "date" }] }, 'columns[0]: column "k" is the key, which is a number or text column (not date)'],
    ];
    for (const [file, reason] of cases) expect(() => parseSchemaFile(file)).toThrow(new SchemaError(reason));
    expect(() => parseSchemaFile({})).toThrow(SchemaError);
  });
});
