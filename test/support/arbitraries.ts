/**
 * fast-check arbitraries for property tests of the query engine against the naive oracle
 * (test/support/oracle.ts) on generated-user-shaped data: random record sets built to make ties
 * and near-ties frequent under docs/api.md's "Ordering" rule, and random queries built to hit the
 * edges of its "Matching" rule and of the `Query` / `Predicate` / `SortKey` semantics in
 * src/query/types.ts. Each filter leaf is an AG Grid filter model compiled by the operator
 * registry (src/kinds/operators.ts), as a request's would be.
 */
import fc from "fast-check";
import { compileColumnModel } from "../../src/kinds/operators.ts";
import { KINDS } from "../../src/kinds/registry.ts";
import type { Predicate, Query, SortKey, TextOp } from "../../src/query/types.ts";
import { STATUS_VALUES, type Status, type UserRecord } from "../../src/generate/record.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { type ColumnId, naiveMatches } from "./oracle.ts";
import { SEED_SPECS } from "./table-store.ts";

/** The generated users' column ids. */
const COLUMN_IDS: readonly ColumnId[] = ["id", "name", "email", "status"];

/** An AG Grid model compiled into a `column` predicate, as a request's is (the parser's errors cannot happen: the arbitraries build valid models). */
function compiled(column: ColumnId, model: Record<string, unknown>): Predicate {
  const spec = SEED_SPECS.find((s) => s.id === column) as ColumnSpec;
  const problems: string[] = [];
  const test = compileColumnModel(KINDS[spec.kind], spec, model, "", (_at, detail) => problems.push(detail));
  if (test === null) throw new Error(`arbitraries: ${JSON.stringify(model)} does not compile: ${problems.join("; ")}`);
  return { kind: "column", column, test };
}

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

/**
 * Pieces that names are glued from. Chosen so the collator (base sensitivity, numeric) calls
 * many different strings equal or nearly equal, and so `fold` has work to do: case, accents
 * (precomposed and decomposed), digit runs with leading zeros, spaces and punctuation,
 * Cyrillic and Greek (with final sigma, which `toLowerCase` treats by context), a CJK
 * character, ß, the ﬁ ligature and fullwidth letters / digits (which NFKD folds).
 */
const NAME_PIECES = [
  "a", "A", "á", "Á", "e", "E", "é", "É", "è", "ê", "e\u0301", "n", "ñ", "Ñ", "u", "ü", "Ü",
  "Å", "å", "o", "ö", "o\u0308", "i", "I", "İ", "z", "Z",
  "ali", "Ali", "ALI", "alice", "jose", "José", "JOSÉ", "émile", "Emile", "bob",
  "0", "1", "01", "001", "2", "9", "10", "21", "111",
  " ", "  ", ".", "-", "_", "'", "@",
  "д", "Д", "ж", "Ж", "α", "Α", "ά", "σ", "ς", "Σ", "Ω",
  "中", "ß", "ss", "SS", "ﬁ", "fi", "Ａ", "ａ", "Ｂ", "１",
] as const;

/** Pieces of an email's local part: a smaller alphabet, the same kinds of traps. */
const LOCAL_PIECES = [
  "a", "A", "e", "é", "É", "n", "ñ", "alice", "alice.", "bob", "jose", "josé", "émile",
  "0", "1", "01", "2", "10", "21", "111", ".", "-", "_", "+", "'", "ß", "ﬁ", "ｘ", "д", "σ",
] as const;

/** Email domains, including one with an accent and a bare one. */
const DOMAINS = ["x", "x.com", "ex.org", "É.fr", "mail.test", "X.COM"] as const;

/** A name: 0..5 glued pieces (so "" now and then). */
const freshNameArb: fc.Arbitrary<string> = fc
  .array(fc.constantFrom(...NAME_PIECES), { minLength: 0, maxLength: 5 })
  .map((pieces) => pieces.join(""));

/** An email: mostly `local@domain`; sometimes "", a name-like string, or no "@" at all. */
const freshEmailArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.array(fc.constantFrom(...LOCAL_PIECES), { minLength: 1, maxLength: 3 }), fc.constantFrom(...DOMAINS))
      .map(([local, domain]) => `${local.join("")}@${domain}`),
  },
  { weight: 1, arbitrary: fc.constant("") },
  { weight: 1, arbitrary: freshNameArb },
);

/** Ids a dataset of "ordinary" integers draws from: dense small values (so x and -x pairs, the ties of an absolute sort, are common), zero, negatives. */
const smallIntIdArb: fc.Arbitrary<number> = fc.integer({ min: -25, max: 60 });

/** Ids of the exotic kind: wide integers, extreme safe integers, 1e21 (whose String() is "1e+21"), fractions. */
const exoticIdArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -100_000, max: 1_000_000 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      0, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 31, -(2 ** 31), 2 ** 32, 1e15, 1e21, -1e21,
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(0.5, -0.5, 1.5, -1.5, 2.25, -2.25, 0.1, 1e-7, 3.14159) },
  { weight: 1, arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }) },
);

/** How many records: mostly small sets (where shrinking is quick), sometimes up to 300. */
const recordCountArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 12 }) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 60 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 300 }) },
);

/** `count` distinct finite ids (never -0, so `String(id)` and `===` agree), in random order. */
function idsArb(count: number): fc.Arbitrary<number[]> {
  const ordinaryIdArb = fc.oneof(
    { weight: 3, arbitrary: smallIntIdArb },
    { weight: 2, arbitrary: fc.integer({ min: -1_000, max: 5_000 }) },
  );
  const mixedIdArb = fc.oneof({ weight: 4, arbitrary: ordinaryIdArb }, { weight: 1, arbitrary: exoticIdArb });
  // Exotic ids in about a third of the datasets; the others hold integers only.
  return fc
    .oneof({ weight: 2, arbitrary: fc.constant(ordinaryIdArb) }, { weight: 1, arbitrary: fc.constant(mixedIdArb) })
    .chain((idArb) =>
      fc.uniqueArray(
        idArb.map((id) => (id === 0 ? 0 : id)), // -0 becomes 0
        { minLength: count, maxLength: count, size: "max" },
      ),
    );
}

/** A value for one cell: usually one of the dataset's pool (whole-value duplicates across rows), else fresh. */
function cellArb(pool: readonly string[], fresh: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: fresh });
}

/**
 * Random datasets: `UserRecord[]` of 0..300 records with unique ids (negative, zero, large
 * and occasionally non-integer), names and emails from the tricky alphabets above, most of
 * them repeated from a small per-dataset pool so equal and near-equal values are frequent,
 * and status `active` / `inactive`. Rows come in random id order.
 */
export const recordsArb: fc.Arbitrary<UserRecord[]> = fc
  .tuple(
    recordCountArb,
    fc.array(freshNameArb, { minLength: 1, maxLength: 12 }),
    fc.array(freshEmailArb, { minLength: 1, maxLength: 12 }),
  )
  .chain(([count, namePool, emailPool]) =>
    fc.tuple(
      idsArb(count),
      fc.array(fc.tuple(cellArb(namePool, freshNameArb), cellArb(emailPool, freshEmailArb), fc.constantFrom<Status>(...STATUS_VALUES)), {
        minLength: count,
        maxLength: count,
        size: "max",
      }),
    ),
  )
  .map(([ids, cells]) => cells.map(([name, email, status], i) => ({ id: ids[i], name, email, status })));

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

/** All text filter ops (types.ts `TextOp`). */
const TEXT_OPS: readonly TextOp[] = ["contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"];

/** All AG Grid number filter types. */
const NUMBER_OPS = [
  "equals", "notEqual", "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual", "inRange", "blank", "notBlank",
];

/** Single characters for short random needles, mixing the data's alphabet with its look-alikes. */
const NEEDLE_CHARS = [
  "a", "A", "á", "e", "E", "é", "É", "è", "n", "ñ", "u", "ü", "å", "i", "I", "o", "s", "z", "b", "l", "j",
  "0", "1", "2", "9", " ", ".", "-", "_", "@", "'", "+", "д", "Д", "σ", "ς", "Σ", "α", "中", "ß", "ﬁ", "ａ", "１", "\u0301",
] as const;

/** Needles no dataset contains. */
const ABSENT_NEEDLES = ["zzq", "qqq", "ЖЖЖЖЖ", "@@@", "xyz123", "ωψ", "...."] as const;

/** Accents to add to a needle, so an unaccented value is searched for with accents (fold strips them from both sides). */
const ACCENTED: Readonly<Record<string, string>> = { a: "á", e: "é", i: "í", n: "ñ", o: "ö", u: "ü", A: "Å", E: "É" };

/** The cells of one column as strings, as text filters see them (types.ts `Predicate`, `text`). */
function columnStrings(records: readonly UserRecord[], column: ColumnId): string[] {
  return records.map((record) =>
    column === "id" ? String(record.id) : column === "status" ? record.status : record[column],
  );
}

/** Rewrites a needle the ways a user's typing differs from the data: case, accents, normalization form. */
const transformArb: fc.Arbitrary<(s: string) => string> = fc.constantFrom(
  (s: string) => s,
  (s: string) => s,
  (s: string) => s.toUpperCase(),
  (s: string) => s.toLowerCase(),
  (s: string) => s.normalize("NFD").replace(/\p{M}/gu, ""),
  (s: string) => s.replace(/[aeinouAE]/g, (c) => ACCENTED[c] ?? c),
  (s: string) => s.normalize("NFD"),
  (s: string) => s.normalize("NFC"),
);

/** A piece of `value`, by code points: the whole, a prefix, a suffix, a middle, or 1..3 characters. */
function pieceOf(value: string): fc.Arbitrary<string> {
  const chars = Array.from(value);
  const n = chars.length;
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(value) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: n }).map((end) => chars.slice(0, end).join("")) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: n }).map((start) => chars.slice(start).join("")) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 0, max: n }), fc.integer({ min: 0, max: n }))
        .map(([i, j]) => chars.slice(Math.min(i, j), Math.max(i, j)).join("")),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.integer({ min: 0, max: n }), fc.integer({ min: 1, max: 3 }))
        .map(([i, len]) => chars.slice(i, i + len).join("")),
    },
  );
}

/** A text needle for a column: mostly a (re-cased / re-accented) piece of an existing cell, else short random, empty or absent. */
function needleArb(cells: readonly string[]): fc.Arbitrary<string> {
  const random = fc.array(fc.constantFrom(...NEEDLE_CHARS), { minLength: 1, maxLength: 3 }).map((c) => c.join(""));
  const others = [
    { weight: 2, arbitrary: random },
    { weight: 1, arbitrary: fc.constant("") },
    { weight: 1, arbitrary: fc.constantFrom(...ABSENT_NEEDLES) },
  ];
  if (cells.length === 0) return fc.oneof(...others);
  const fromData = fc
    .tuple(fc.constantFrom(...cells).chain(pieceOf), transformArb)
    .map(([piece, transform]) => transform(piece));
  return fc.oneof({ weight: 8, arbitrary: fromData }, ...others);
}

/** A text predicate on any column, needles mostly drawn from that column (sometimes another one). */
function textPredicateArb(records: readonly UserRecord[]): fc.Arbitrary<Predicate> {
  return fc
    .tuple(fc.constantFrom(...COLUMN_IDS), fc.constantFrom(...COLUMN_IDS), fc.integer({ min: 0, max: 4 }), fc.constantFrom(...TEXT_OPS))
    .chain(([column, otherColumn, pick, op]) => {
      const source = pick === 0 ? otherColumn : column; // one in five takes its needle from another column
      const valueArb = op === "blank" || op === "notBlank" ? fc.constant("") : needleArb(columnStrings(records, source));
      return valueArb.map((value): Predicate => compiled(column, { filterType: "text", type: op, filter: value }));
    });
}

/** A number on the id axis: an existing id, one nudged by ±1 / ±0.5, a random integer, or an extreme. */
function idValueArb(records: readonly UserRecord[]): fc.Arbitrary<number> {
  const random = fc.oneof(
    fc.integer({ min: -100, max: 1_200 }),
    fc.constantFrom(0, -1, 1, 0.5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e21, -1e300, 1e300),
  );
  if (records.length === 0) return random;
  const existing = fc.constantFrom(...records.map((record) => record.id));
  const nudged = fc
    .tuple(existing, fc.constantFrom(-1, -0.5, 0.5, 1))
    .map(([id, delta]) => id + delta);
  return fc.oneof({ weight: 3, arbitrary: existing }, { weight: 2, arbitrary: nudged }, { weight: 2, arbitrary: random });
}

/** A number predicate on `id`; `valueTo` only for `inRange`, usually above `value`, sometimes equal or below (an empty range). */
function numberPredicateArb(records: readonly UserRecord[]): fc.Arbitrary<Predicate> {
  return fc
    .tuple(fc.constantFrom(...NUMBER_OPS), idValueArb(records), idValueArb(records), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 5 }))
    .map(([op, value, other, width, shape]): Predicate => {
      if (op === "blank" || op === "notBlank") return compiled("id", { filterType: "number", type: op });
      if (op !== "inRange") return compiled("id", { filterType: "number", type: op, filter: value });
      // shape 0: another data point (either side); 1: value itself (empty); 2..5: value + width.
      const valueTo = shape === 0 ? other : shape === 1 ? value : value + width;
      return compiled("id", { filterType: "number", type: op, filter: value, filterTo: valueTo });
    });
}

/** One value of a set filter on `column`: a cell (re-cased / re-accented), or a value absent from the data. */
function setValueArb(records: readonly UserRecord[], column: ColumnId): fc.Arbitrary<string> {
  if (column === "status") {
    // values an enum cannot hold are refused by the parser (a 400): only its values, in any case
    return fc.constantFrom("active", "inactive", "ACTIVE", "Inactive", "InAcTiVe");
  }
  if (column === "id") {
    // only numbers: a set filter's non-number on a number column is refused (a 400)
    const absent = fc.constantFrom("999999937", "1e300", "-0.25");
    if (records.length === 0) return absent;
    const existing = fc.constantFrom(...records.map((record) => record.id));
    return fc.oneof(
      { weight: 4, arbitrary: existing.map(String) },
      { weight: 1, arbitrary: existing.map((id) => (String(id).includes("e") || String(id).includes(".") ? String(id) : `${id}.0`)) },
      { weight: 1, arbitrary: existing.map((id) => String(id + 1)) },
      { weight: 1, arbitrary: absent },
    );
  }
  const cells = columnStrings(records, column);
  const absent = fc.constantFrom(...ABSENT_NEEDLES);
  if (cells.length === 0) return fc.oneof(absent, fc.constant(""));
  return fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...cells), transformArb).map(([cell, transform]) => transform(cell)) },
    { weight: 1, arbitrary: fc.constantFrom(...cells).chain(pieceOf) },
    { weight: 1, arbitrary: absent },
  );
}

/** A set predicate on any column with 0..4 values (an empty list matches nothing), sometimes with null. */
function setPredicateArb(records: readonly UserRecord[]): fc.Arbitrary<Predicate> {
  return fc
    .constantFrom(...COLUMN_IDS)
    .chain((column) =>
      fc
        .tuple(fc.array(setValueArb(records, column), { minLength: 0, maxLength: 4 }), fc.boolean())
        .map(([values, withNull]): Predicate => compiled(column, { filterType: "set", values: withNull ? [...values, null] : values })),
    );
}

/** A filter on the status column: any subset of its values, the empty one included. */
const statusPredicateArb: fc.Arbitrary<Predicate> = fc
  .subarray([...STATUS_VALUES])
  .map((values): Predicate => compiled("status", { filterType: "set", values }));

/** The global search: one to three terms, pieces of any column's cells (a term never holds white space). */
function searchPredicateArb(records: readonly UserRecord[]): fc.Arbitrary<Predicate> {
  const cells = COLUMN_IDS.flatMap((c) => columnStrings(records, c));
  const term = needleArb(cells).map((t) => t.replace(/\s+/gu, "")).filter((t) => t !== "");
  return fc.array(term, { minLength: 1, maxLength: 3 }).map((terms): Predicate => ({ kind: "search", terms }));
}

/** A predicate tree of at most `depth` levels of and/or above the leaves. */
function predicateArb(records: readonly UserRecord[], depth: number): fc.Arbitrary<Predicate> {
  const leaf = fc.oneof(
    { weight: 4, arbitrary: textPredicateArb(records) },
    { weight: 2, arbitrary: numberPredicateArb(records) },
    { weight: 2, arbitrary: setPredicateArb(records) },
    { weight: 1, arbitrary: statusPredicateArb },
    { weight: 1, arbitrary: searchPredicateArb(records) },
  );
  if (depth === 0) return leaf;
  const branch = fc
    .tuple(fc.constantFrom("and" as const, "or" as const), fc.array(predicateArb(records, depth - 1), { minLength: 1, maxLength: 3 }))
    .map(([kind, children]): Predicate => ({ kind, children }));
  return fc.oneof({ weight: 2, arbitrary: leaf }, { weight: 1, arbitrary: branch });
}

/** One sort key on any column, either direction, `absolute` half the time (meaningful on the number column `id` only). */
const sortKeyArb: fc.Arbitrary<SortKey> = fc.record({
  column: fc.constantFrom(...COLUMN_IDS),
  direction: fc.constantFrom("asc" as const, "desc" as const),
  absolute: fc.boolean(),
});

/**
 * Random queries over `records` (types.ts `Query`): `filter` null or a predicate tree up to two
 * levels of and/or deep, with text predicates of every op on every column (needles mostly
 * pieces of existing cells, re-cased or re-accented; also 1–3 random characters, "" and absent
 * ones), number predicates of every op on `id` (inRange ranges sometimes empty), set predicates
 * on every column, status predicates; 0–3 sort keys on distinct columns (AG Grid's sortModel
 * never repeats a column), either direction, sometimes absolute; `limit` 0..50; `offset` 0, in
 * the middle, just before the last page, exactly the matching total, past it, or the largest
 * safe integer.
 */
export function queryArb(records: UserRecord[]): fc.Arbitrary<Query> {
  const filterArb = fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 4, arbitrary: predicateArb(records, 2) });
  const sortArb = fc.uniqueArray(sortKeyArb, { minLength: 0, maxLength: 3, selector: (key) => key.column });
  return fc
    .tuple(filterArb, sortArb, fc.integer({ min: 0, max: 50 }))
    .chain(([filter, sort, limit]) => {
      // The matching total, only to aim offsets at the interesting places.
      const total = filter === null ? records.length : records.filter((record) => naiveMatches(record, filter)).length;
      const offsetArb = fc.oneof(
        { weight: 3, arbitrary: fc.constant(0) },
        { weight: 3, arbitrary: fc.integer({ min: 0, max: total }) },
        { weight: 1, arbitrary: fc.integer({ min: -1, max: 1 }).map((d) => Math.max(0, total - limit + d)) },
        { weight: 1, arbitrary: fc.constant(total) },
        { weight: 1, arbitrary: fc.integer({ min: total + 1, max: total + 100 }) },
        { weight: 1, arbitrary: fc.constant(Number.MAX_SAFE_INTEGER) },
      );
      return offsetArb.map((offset): Query => ({ filter, sort, offset, limit }));
    });
}
