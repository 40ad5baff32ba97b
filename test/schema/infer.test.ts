import { describe, expect, test } from "bun:test";
import { emptyProfile, inferKind, profileJson, profileText } from "../../src/schema/infer.ts";
import { SchemaError, parseSchemaFile } from "../../src/schema/kinds.ts";

/** The kind inferred from JSON values, over `rows` rows. */
function fromJson(values: unknown[], rows = values.length) {
  const profile = emptyProfile();
  for (const v of values) profileJson(profile, v);
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
    expect(fromJson(roles)).toEqual({ kind: "enum", values: ["Admin", "member", "viewer"] });
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
    expect(fromJson(Array.from({ length: 20 }, () => "42"))).toEqual({ kind: "enum", values: ["42"] });
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

describe("schema files", () => {
  test("the columns beyond the seed's four, in file order", () => {
    expect(
      parseSchemaFile({
        columns: [
          { id: "created_at", kind: "datetime" },
          { id: "status", kind: "enum", values: ["active", "inactive"] },
          { id: "role", kind: "enum", values: ["admin", "member", "viewer"] },
        ],
      }),
    ).toEqual([
      { id: "created_at", kind: "datetime" },
      { id: "role", kind: "enum", values: ["admin", "member", "viewer"] },
    ]);
  });

  test("each problem refused with its reason", () => {
    const cases: [unknown, RegExp][] = [
      [[], /is a JSON object/],
      [{ columns: [{ id: "1x", kind: "text" }] }, /must match/],
      [{ columns: [{ id: "a", kind: "string" }] }, /kinds are number, text, enum, date, datetime, boolean, json/],
      [{ columns: [{ id: "a", kind: "enum" }] }, /needs a non-empty "values"/],
      [{ columns: [{ id: "a", kind: "enum", values: ["x", "x"] }] }, /lists "x" twice/],
      [{ columns: [{ id: "a", kind: "text", values: ["x"] }] }, /only enum columns have "values"/],
      [{ columns: [{ id: "a", kind: "text" }, { id: "a", kind: "number" }] }, /listed twice/],
      [{ columns: [{ id: "id", kind: "text" }] }, /always number/],
    ];
    for (const [file, reason] of cases) expect(() => parseSchemaFile(file)).toThrow(reason);
    expect(() => parseSchemaFile({})).toThrow(SchemaError);
  });
});
