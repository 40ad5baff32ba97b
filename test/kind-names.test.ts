/**
 * Kinds own their behaviour (README.md "Layout": src/kinds, one module per column kind): outside
 * src/kinds, src/schema and src/demo, code asks a column's kind module (its facet shape, key role,
 * value type, record values, writer, claim conversion, PostgreSQL values…) instead of testing the
 * kind's name. scripts/kind-names.ts finds the lines that test a kind by name; this holds the
 * bound: none outside src/engine and src/http, whose own restructuring moves their last ones
 * (`bun scripts/kind-names.ts` lists those).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { kindNameLines, kindNameTests } from "../scripts/kind-names.ts";

describe("tests of a kind by its name", () => {
  test("are found in comparisons, switches and lists, and not in other vocabularies that share the words", () => {
    const code = [
      'if (spec.kind === "number") a();', // 1
      'if ("text" !== column.spec.kind) a();', // 2
      'if (seen.get(id) === "enum") a();', // 3
      "switch (spec.kind) {", // 4
      '  case "date":', // 5
      "    break;",
      "}",
      'if (["enum", "boolean"].includes(kind)) a();', // 8
      'if (typeof x === "number") a();',
      'if (test.op === "text") a();',
      'if (format === "json") a();',
      'if (model.filterType === "number") a();',
      "switch (test.op) {",
      '  case "text":',
      "    break;",
      "}",
      '// kind === "number" in a comment',
      'const s = "kind === \\"text\\"";',
      'const spec = { id: "x", kind: "number" };',
    ].join("\n");
    expect(kindNameLines(code)).toEqual([1, 2, 3, 5, 8]);
  });

  test("none outside src/kinds, src/schema, src/demo (src/http aside, counted by the script)", () => {
    const found = kindNameTests(join(import.meta.dir, "../src")).filter((t) => !t.file.startsWith("http/"));
    expect(found.map((t) => `src/${t.file}:${t.line}: ${t.text}`)).toEqual([]);
  });
});
