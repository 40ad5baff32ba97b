/**
 * The global search through the search index (store/types.ts `SearchIndex`) against the naive
 * oracle (test/support/table-oracle.ts `searchMatches`), on tables large enough that the lists
 * are of every form: dense bitmaps, sparse lists of a few rows, lists split over partition codes.
 * Terms of 1 to 6 characters cut from the values (and some no value holds), several per search,
 * terms an enum value holds (a partition column's and another enum's), accents and case, a text
 * key or a number key; every search ANDed with a status filter sometimes; the first blocks and
 * the total under every plan — so the word-by-word AND, the smallest-list path, the merges of
 * list groups, the checks and the whole-term evaluation all meet the oracle.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createEngine, executeQuery } from "../../src/engine/execute.ts";
import { parsePostBody } from "../../src/query/post.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { type Table, type TableRecord, oraclePost } from "../support/table-oracle.ts";
import { buildTableStore, keysOf } from "../support/table-store.ts";

/** Syllables the values are made of: few enough that n-grams repeat across rows, some accented. */
const SYLLABLES = ["ma", "ri", "an", "na", "jo", "sé", "el", "la", "ka", "tz", "ö", "ü", "qu", "x", "yy", "ßo", "in", "ac", "ti", "ve"];
/** An enum that partitions the rows (its values contain terms like "act" and "in"). */
const STATUS: ColumnSpec = { id: "status", kind: "enum", values: ["active", "inactive", "invited"] };
/** Another enum, declared out of order, never the partition (the status comes first). */
const ROLE: ColumnSpec = { id: "role", kind: "enum", values: ["viewer", "admin", "maintainer"] };

/** A value of syllables, seeded by the row and a column salt (deterministic, no arbitrary per row). */
function word(seed: number, salt: number, length: number): string {
  let x = (seed * 2654435761 + salt * 97) >>> 0;
  let out = "";
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x ^ (x >>> 15), 2246822507) + i) >>> 0;
    out += SYLLABLES[x % SYLLABLES.length];
  }
  return (x >>> 8) % 7 === 0 ? out.toUpperCase() : out;
}

/** A table of `rows` rows: a number or text key, two text columns, the status and the role (nulls in the text and the role). */
function tableOf(rows: number, textKey: boolean): { table: Table; records: TableRecord[] } {
  const specs: ColumnSpec[] = [textKey ? { id: "key", kind: "text" } : { id: "key", kind: "number" }, { id: "name", kind: "text" }, { id: "city", kind: "text" }, STATUS, ROLE];
  const records: TableRecord[] = [];
  for (let r = 0; r < rows; r++) {
    records.push({
      key: textKey ? `k-${word(r, 7, 2)}-${r}` : r * 3 + 1,
      name: r % 11 === 0 ? null : word(r, 1, 1 + (r % 4)),
      // a rare letter now and then: sparse lists of 1-grams too
      city: r % 13 === 0 ? null : `${word(r, 2, 2)} ${word(r, 3, 1)}${r % 499 === 0 ? " Ωx" : ""}`,
      status: (STATUS.values as string[])[(r * 7) % 3],
      role: r % 5 === 0 ? null : (ROLE.values as string[])[(r * 5) % 3],
    });
  }
  return { table: { specs, key: "key" }, records };
}

const TABLES = [tableOf(6000, false), tableOf(3000, true)];

/** A term: a piece (1–6 characters) of a value of some row, in another case, or one no value holds. */
function termArb(records: TableRecord[]): fc.Arbitrary<string> {
  const piece = fc.tuple(fc.nat(records.length - 1), fc.constantFrom("key", "name", "city", "status", "role"), fc.nat(40), fc.integer({ min: 1, max: 6 }), fc.boolean()).map(([i, column, at, length, upper]) => {
    const value = records[i][column];
    const text = value === null ? "ma" : String(value);
    const start = at % Math.max(1, text.length);
    const cut = text.slice(start, start + length).trim();
    const term = cut === "" ? text.trim() || "ma" : cut;
    return upper ? term.toUpperCase() : term;
  });
  return fc.oneof({ weight: 8, arbitrary: piece }, { weight: 1, arbitrary: fc.constantFrom("zzz", "q", "wx", "maxx", "É", "ss", "act", "in", "ve", "tive", "ω", "Ωx", "ωx m") });
}

describe("the search through the search index, against the naive oracle", () => {
  for (const plan of ["auto", "walk", "sort"] as const) {
    test(`1 to 4 terms of 1-6 characters, enum values, a status filter, blocks in key and name order (plan ${plan})`, () => {
      for (const { table, records } of TABLES) {
        const store = buildTableStore(records, table);
        const bodyArb = fc.record({
          terms: fc.array(termArb(records), { minLength: 1, maxLength: 4 }),
          status: fc.option(fc.constantFrom("active", "inactive"), { nil: null }),
          sort: fc.constantFrom<{ colId: string; sort: "asc" | "desc" }[]>([], [{ colId: "name", sort: "asc" }], [{ colId: "city", sort: "desc" }]),
          startRow: fc.constantFrom(0, 0, 7, 150),
        });
        fc.assert(
          fc.property(bodyArb, ({ terms, status, sort, startRow }) => {
            const engine = createEngine(store, { plan });
            const filterModel: Record<string, Record<string, unknown>> = status === null ? {} : { status: { filterType: "set", values: [status] } };
            for (let block = 0; block < 2; block++) {
              const body = { startRow: startRow + block * 50, endRow: startRow + block * 50 + 50, sortModel: sort, filterModel, quickFilter: terms.join(" ") };
              const page = executeQuery(engine, parsePostBody(body, 1000, store.schema).query);
              expect({ keys: keysOf(store, page.rows), total: page.total }).toEqual(oraclePost(records, table, body));
            }
          }),
          { numRuns: Math.max(20, Math.floor(Number(process.env.PROPERTY_RUNS ?? 150) / 3)) },
        );
      }
    }, 300_000);
  }

  test("the tables have the forms the property needs: dense and sparse lists, lists over several codes", () => {
    for (const { table, records } of TABLES) {
      const store = buildTableStore(records, table);
      for (const index of store.search.grams) {
        let dense = 0;
        let sparse = 0;
        for (let k = 0; k < index.counts.length; k++) {
          if (index.counts[k] * 32 > store.rowCount) dense++;
          else if (index.counts[k] > 0) sparse++;
        }
        expect(dense).toBeGreaterThan(0);
        expect(sparse).toBeGreaterThan(0);
      }
      expect(store.partition?.column).toBe("status");
    }
  });
});
