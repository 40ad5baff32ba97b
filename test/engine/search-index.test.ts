/**
 * The global search through the search index (store/types.ts `SearchIndex`) against the naive
 * oracle (test/support/table-oracle.ts `searchMatches`), on tables large enough that the lists
 * are of every form: dense bitmaps, sparse lists of a few rows, lists split over partition codes.
 * Terms of 1 to 6 characters cut from the values (and some no value holds), several per search,
 * terms an enum value holds (a partition column's and another enum's), accents and case, a text
 * key or a number key; every search ANDed with a status filter sometimes; the first blocks and
 * the total under every plan — so the word-by-word AND, the smallest-list path, the merges of
 * list groups, the checks and the whole-term evaluation all meet the oracle.
 *
 * Then the same searches over a live replica's versions: batches of inserts, updates (to values
 * with n-grams the snapshot lacks too), deletes and key changes applied one after another; each
 * version's answers (the snapshot's rows through the search index, less the dead ones, plus the
 * changed rows) meet the oracle over the rows as they then are, an older version keeps its
 * answers, a compaction's store has the search index a build of the same rows has, and a query
 * run in slices by the scheduler answers from the version it started on while a batch is applied
 * between two of its slices.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type Engine, applyChanges, createEngine, executeQuery, executeWork, extraRecords, planOf } from "../../src/engine/execute.ts";
import { QueryScheduler } from "../../src/engine/scheduler.ts";
import type { Work } from "../../src/bits/work.ts";
import { type Change, lsnText } from "../../src/live/changes.ts";
import type { DeltaVersion } from "../../src/live/delta.ts";
import { compactTable } from "../../src/live/compact.ts";
import { buildStore } from "../../src/store/build.ts";
import { parsePostBody } from "../../src/query/post.ts";
import type { ColumnSpec } from "../../src/schema/kinds.ts";
import { type Table, type TableRecord, oraclePost, searchMatches } from "../support/table-oracle.ts";
import { restrictSearch } from "../../src/access/scope.ts";
import { columnGrams, storedColumn } from "../../src/store/types.ts";
import { findList, gramKey, listRows } from "../../src/bits/trigrams.ts";
import { fold } from "../../src/collation/collation.ts";
import { type PrintedStep, printStep } from "../../src/engine/plan.ts";
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

/** One change of a batch, abstractly: what, which existing key (by index), a fresh key's seed, the values' seed. */
interface ChangeSpec {
  type: "insert" | "update" | "delete" | "rekey";
  pick: number;
  seed: number;
}

const changeArb: fc.Arbitrary<ChangeSpec> = fc.record({
  type: fc.constantFrom<ChangeSpec["type"]>("insert", "update", "update", "delete", "rekey"),
  pick: fc.nat(),
  seed: fc.integer({ min: 1, max: 1_000_000 }),
});

/** A record of the table for `key`, its values made from `seed` (new n-grams now and then: "Ωx", "ђ", "zz9"). */
function changedRecord(textKey: boolean, key: unknown, seed: number): TableRecord {
  const rare = ["", "", "", " Ωx", " ђ", " zz9"][seed % 6];
  return {
    key,
    name: seed % 9 === 0 ? null : word(seed, 11, 1 + (seed % 4)),
    city: seed % 10 === 0 ? null : `${word(seed, 12, 2)}${rare}`,
    status: (STATUS.values as string[])[seed % 3],
    role: seed % 4 === 0 ? null : (ROLE.values as string[])[(seed >>> 2) % 3],
  };
}

/** Applies abstract changes to the model (key → record); returns the batch's changes. */
function resolveChanges(textKey: boolean, model: Map<unknown, TableRecord>, keys: unknown[], specs: ChangeSpec[]): Change[] {
  const out: Change[] = [];
  for (const c of specs) {
    const existing = keys.length === 0 ? undefined : keys[c.pick % keys.length];
    const fresh = textKey ? `k-new-${c.seed}` : 1_000_000 + c.seed * 3;
    const live = existing !== undefined && model.has(existing);
    if (c.type === "insert" || !live) {
      if (model.has(fresh)) continue;
      const record = changedRecord(textKey, fresh, c.seed);
      model.set(fresh, record);
      keys.push(fresh);
      out.push({ op: "upsert", record });
    } else if (c.type === "update") {
      const record = changedRecord(textKey, existing, c.seed);
      model.set(existing, record);
      out.push({ op: "upsert", record });
    } else if (c.type === "delete") {
      model.delete(existing);
      out.push({ op: "delete", key: existing as number | string });
    } else {
      if (model.has(fresh)) continue;
      model.delete(existing);
      out.push({ op: "delete", key: existing as number | string });
      const record = changedRecord(textKey, fresh, c.seed);
      model.set(fresh, record);
      keys.push(fresh);
      out.push({ op: "upsert", record });
    }
  }
  return out;
}

/** A body of the search `terms`, an optional status filter, a sort and a window. */
function searchBody(terms: string[], status: string | null, sort: { colId: string; sort: "asc" | "desc" }[], startRow: number, size: number) {
  const filterModel: Record<string, Record<string, unknown>> = status === null ? {} : { status: { filterType: "set", values: [status] } };
  return { startRow, endRow: startRow + size, sortModel: sort, filterModel, quickFilter: terms.join(" ") };
}

/** An engine's page of a body: keys (changed rows' too) and total. */
function answerOf(engine: Engine, body: ReturnType<typeof searchBody>): { keys: unknown[]; total: number } {
  const page = executeQuery(engine, parsePostBody(body, 1000, engine.store.schema).query);
  return { keys: keysOf(engine.store, page.rows, extraRecords(engine)), total: page.total };
}

/** The records among `records` holding every term in one of `columns`' values (the oracle's search over those columns alone), in key order as the table keeps them. */
function searchedIn(table: Table, records: readonly TableRecord[], columns: readonly string[], text: string): TableRecord[] {
  const seen: Table = { specs: table.specs.filter((spec) => columns.includes(spec.id)), key: table.key };
  return records.filter((r) => searchMatches(seen, r, text));
}

/** A role's searchable columns: any subset of the table's (the key among them or not), in any order. */
const SEARCHABLE = ["key", "name", "city", "status", "role"];
const roleColumnsArb = fc.subarray(SEARCHABLE, { minLength: 0 }).chain((ids) => fc.shuffledSubarray(ids, { minLength: ids.length, maxLength: ids.length }));

describe("a search through some columns (an access role's) reads those columns' own lists, against the naive oracle", () => {
  for (const plan of ["auto", "walk", "sort"] as const) {
    test(`random column sets, 1 to 3 terms, a status filter, the first blocks and the total (plan ${plan})`, () => {
      for (const { table, records } of TABLES) {
        const store = buildTableStore(records, table);
        const caseArb = fc.record({
          columns: roleColumnsArb,
          terms: fc.array(termArb(records), { minLength: 1, maxLength: 3 }),
          status: fc.option(fc.constantFrom("active", "inactive"), { nil: null }),
          startRow: fc.constantFrom(0, 0, 7, 150),
        });
        fc.assert(
          fc.property(caseArb, ({ columns, terms, status, startRow }) => {
            const engine = createEngine(store, { plan });
            const filterModel: Record<string, Record<string, unknown>> = status === null ? {} : { status: { filterType: "set", values: [status] } };
            const text = terms.join(" ");
            // the oracle: the records the search through those columns keeps, then the request without its search
            const kept = searchedIn(table, records, columns, text);
            for (let block = 0; block < 2; block++) {
              const body = { startRow: startRow + block * 50, endRow: startRow + block * 50 + 50, sortModel: [], filterModel, quickFilter: text };
              const query = parsePostBody(body, 1000, store.schema).query;
              const page = executeQuery(engine, { ...query, filter: restrictSearch(query.filter, columns) });
              expect({ keys: keysOf(store, page.rows), total: page.total }).toEqual(oraclePost(kept, table, { ...body, quickFilter: "" }));
            }
          }),
          { numRuns: Math.max(20, Math.floor(Number(process.env.PROPERTY_RUNS ?? 150) / 3)) },
        );
      }
    }, 300_000);
  }

  test("each covered column's own 1- and 2-gram lists hold exactly the rows whose value in that column holds the n-gram", () => {
    const { table, records } = TABLES[0];
    const store = buildTableStore(records, table);
    expect([...store.search.columns.keys()]).toEqual(["key", "name", "city"]);
    const byKey = new Map(records.map((r) => [r.key, r]));
    const rowRecords = keysOf(store, Uint32Array.from({ length: store.rowCount }, (_, i) => i)).map((k) => byKey.get(k) as TableRecord);
    for (const id of ["key", "name", "city"]) {
      const folded = rowRecords.map((r) => (r[id] === null ? "" : fold(String(r[id]))));
      for (const n of [1, 2] as const) {
        const index = columnGrams(store, storedColumn(store, id), n);
        const grams = new Set<string>();
        for (const value of folded) {
          const cps = [...value];
          for (let i = 0; i + n <= cps.length; i++) grams.add(cps.slice(i, i + n).join(""));
        }
        expect(index.keys.length).toBe(grams.size);
        for (const gram of grams) {
          const k = findList(index, gramKey([...gram].map((c) => c.codePointAt(0) as number)));
          const want = folded.flatMap((value, row) => (value.includes(gram) ? [row] : []));
          expect([...listRows(index, k, store.rowCount)]).toEqual(want);
        }
      }
    }
  });

  test("a term only in a column the search does not look into plans as a term no row holds", () => {
    const { table, records } = TABLES[0];
    const store = buildTableStore(records, table);
    // "Ωx" is only in some cities: a search through the key and the name finds no row, planned
    // as "none" from their own lists, exactly as a term no value holds at all
    const hidden = planOf(createEngine(store), { ...parsePostBody({ quickFilter: "Ωx" }, 1000, store.schema).query, filter: { kind: "search", terms: ["Ωx"], columns: ["key", "name"] } });
    const absent = planOf(createEngine(store), { ...parsePostBody({ quickFilter: "Ωq" }, 1000, store.schema).query, filter: { kind: "search", terms: ["Ωq"], columns: ["key", "name"] } });
    expect(searchedIn(table, records, ["city"], "Ωx").length).toBeGreaterThan(0);
    expect(JSON.stringify(printStep(hidden.root))).toEqual(JSON.stringify(printStep(absent.root)).replaceAll("Ωq", "Ωx"));
  });

  test("explain names each list a search through some columns reads by its column, and prints no list's data", () => {
    const { records, table } = TABLES[0];
    const store = buildTableStore(records, table);
    const names: unknown[] = [];
    const walk = (step: PrintedStep) => {
      if (step.index !== undefined) names.push(step.index);
      for (const child of step.children ?? []) walk(child);
    };
    for (const [term, columns] of [["ma", ["key", "city"]], ["ma", ["city"]], ["mari", ["name", "city"]], ["ma", undefined], ["ma", ["key", "name", "city", "status"]]] as const) {
      const query = parsePostBody({ quickFilter: term }, 1000, store.schema).query;
      names.length = 0;
      walk(printStep(planOf(createEngine(store), { ...query, filter: { kind: "search", terms: [term], columns: columns === undefined ? undefined : [...columns] } }).root));
      const lists = names.filter((n) => typeof n !== "string" || /search|trigrams/.test(n));
      expect(lists.length).toBeGreaterThan(0);
      // every covered column (with or without the enums): the lists across them
      for (const n of lists) expect(n).toMatch(columns === undefined || columns.length > 3 ? /^search\.[123]$/ : /^col\.(key|name|city)\.(search\.[12]|trigrams)$/);
    }
  });
});

describe("the search through the search index over a live replica's change batches, against the naive oracle", () => {
  const rareTerms = fc.constantFrom("Ωx", "ω", "ђ", "zz9", "z", "9", "x m");
  for (const plan of ["auto", "walk", "sort"] as const) {
    test(`each version after inserts, updates, deletes and key changes; the version before keeps its answers (plan ${plan})`, () => {
      for (const [t, { table, records }] of TABLES.entries()) {
        const textKey = t === 1;
        const store = buildTableStore(records, table);
        const caseArb = fc.record({
          batches: fc.array(fc.array(changeArb, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 4 }),
          searches: fc.array(
            fc.record({
              terms: fc.array(fc.oneof({ weight: 4, arbitrary: termArb(records) }, { weight: 1, arbitrary: rareTerms }), { minLength: 1, maxLength: 3 }),
              status: fc.option(fc.constantFrom("active", "inactive"), { nil: null }),
              sort: fc.constantFrom<{ colId: string; sort: "asc" | "desc" }[]>([], [{ colId: "name", sort: "asc" }], [{ colId: "key", sort: "desc" }]),
              startRow: fc.constantFrom(0, 0, 30),
            }),
            { minLength: 1, maxLength: 3 },
          ),
        });
        fc.assert(
          fc.property(caseArb, ({ batches, searches }) => {
            const model = new Map<unknown, TableRecord>(records.map((r) => [r.key, r]));
            const keys = records.map((r) => r.key);
            let engine = createEngine(store, { plan });
            let lsn = 0x1000;
            for (const specs of batches) {
              const before = engine;
              const beforeBody = searchBody(searches[0].terms, searches[0].status, searches[0].sort, searches[0].startRow, 40);
              const beforeAnswer = answerOf(before, beforeBody);
              engine = applyChanges(engine, { lsn: lsnText((lsn += 0x100)), commitTime: Date.now(), changes: resolveChanges(textKey, model, keys, specs) });
              const rows = [...model.values()];
              for (const { terms, status, sort, startRow } of searches) {
                for (let block = 0; block < 2; block++) {
                  const body = searchBody(terms, status, sort, startRow + block * 40, 40);
                  expect(answerOf(engine, body)).toEqual(oraclePost(rows, table, body));
                }
              }
              expect(answerOf(before, beforeBody)).toEqual(beforeAnswer);
            }
          }),
          { numRuns: Math.max(10, Math.floor(Number(process.env.PROPERTY_RUNS ?? 150) / 6)) },
        );
      }
    }, 300_000);
  }

  test("a search through some columns (an access role's) on each version, against the naive oracle over those columns", () => {
    for (const [t, { table, records }] of TABLES.entries()) {
      const textKey = t === 1;
      const store = buildTableStore(records, table);
      const caseArb = fc.record({
        batches: fc.array(fc.array(changeArb, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 3 }),
        columns: roleColumnsArb,
        terms: fc.array(fc.oneof({ weight: 4, arbitrary: termArb(records) }, { weight: 1, arbitrary: rareTerms }), { minLength: 1, maxLength: 3 }),
        status: fc.option(fc.constantFrom("active", "inactive"), { nil: null }),
      });
      fc.assert(
        fc.property(caseArb, ({ batches, columns, terms, status }) => {
          const model = new Map<unknown, TableRecord>(records.map((r) => [r.key, r]));
          const keys = records.map((r) => r.key);
          let engine = createEngine(store);
          let lsn = 0x1000;
          for (const specs of batches) {
            engine = applyChanges(engine, { lsn: lsnText((lsn += 0x100)), commitTime: Date.now(), changes: resolveChanges(textKey, model, keys, specs) });
            const kept = searchedIn(table, [...model.values()], columns, terms.join(" "));
            for (let block = 0; block < 2; block++) {
              const body = searchBody(terms, status, [], block * 40, 40);
              const query = parsePostBody(body, 1000, store.schema).query;
              const page = executeQuery(engine, { ...query, filter: restrictSearch(query.filter, columns) });
              expect({ keys: keysOf(engine.store, page.rows, extraRecords(engine)), total: page.total }).toEqual(oraclePost(kept, table, { ...body, quickFilter: "" }));
            }
          }
        }),
        { numRuns: Math.max(10, Math.floor(Number(process.env.PROPERTY_RUNS ?? 150) / 6)) },
      );
    }
  }, 300_000);

  test("a compaction's store has the search index a build of the same rows has", () => {
    const { table, records } = TABLES[0];
    const model = new Map<unknown, TableRecord>(records.map((r) => [r.key, r]));
    const keys = records.map((r) => r.key);
    let engine = createEngine(buildTableStore(records, table));
    const specs: ChangeSpec[] = Array.from({ length: 300 }, (_, i) => ({ type: (["insert", "update", "delete", "rekey"] as const)[i % 4], pick: i * 7919, seed: i * 31 + 5 }));
    for (let b = 0; b < 3; b++) engine = applyChanges(engine, { lsn: lsnText(0x1000 + b * 0x100), commitTime: Date.now(), changes: resolveChanges(false, model, keys, specs.slice(b * 100, b * 100 + 100)) });
    const compacted = buildStore(compactTable(engine.live as DeltaVersion));
    const fresh = buildTableStore([...model.values()].sort((a, b) => (a.key as number) - (b.key as number)), table);
    expect(compacted.rowCount).toBe(model.size);
    expect(compacted.search.grams.map((index) => index.counts.length)).toEqual(fresh.search.grams.map((index) => index.counts.length));
    expect(compacted.search).toEqual(fresh.search);
  });

  test("a query run in slices answers from the version it started on while a batch is applied between its slices", async () => {
    const { table, records } = TABLES[0];
    const store = buildTableStore(records, table);
    const model = new Map<unknown, TableRecord>(records.map((r) => [r.key, r]));
    const keys = records.map((r) => r.key);
    // a version with changes (the live path), then the query admitted on it: two frequent terms, sorted by name
    let engine = applyChanges(createEngine(store), { lsn: "0/1000", commitTime: 0, changes: resolveChanges(false, model, keys, Array.from({ length: 40 }, (_, i) => ({ type: "update" as const, pick: i * 131, seed: i + 7 }))) });
    const body = searchBody(["ma", "a"], null, [{ colId: "name", sort: "asc" }], 0, 60);
    const { query } = parsePostBody(body, 1000, store.schema);
    const admitted = engine;
    // the scheduler runs it (as the HTTP layer does an expensive plan): the filter evaluated, a pause, the window
    const plan = planOf(admitted, query);
    const rowsBefore = [...model.values()];
    // one piece a turn: the scheduler's slice is shorter than any piece
    const scheduler = new QueryScheduler({ sliceMs: 1e-6 });
    let pieces = 0;
    let batchApplied = false;
    let resumedAfterBatch = false;
    const running = scheduler.submit<ReturnType<typeof executeQuery>>(function* (): Work<ReturnType<typeof executeQuery>> {
      const work = executeWork(admitted, plan, false);
      for (;;) {
        const step = work.next();
        if (step.done === true) return step.value;
        pieces++;
        yield;
        if (batchApplied) resumedAfterBatch = true;
      }
    });
    // wait (on event-loop turns) until the query has paused after its first piece
    while (pieces === 0) await new Promise((resolve) => setImmediate(resolve));
    // a batch applied meanwhile: rows holding both terms deleted, updated away and inserted
    const changes = resolveChanges(false, model, keys, Array.from({ length: 120 }, (_, i) => ({ type: (["delete", "update", "insert"] as const)[i % 3], pick: i * 53, seed: i * 17 + 3 })));
    engine = applyChanges(engine, { lsn: "0/2000", commitTime: 0, changes });
    batchApplied = true;
    const rowsAfter = [...model.values()];
    // the newer version answered at once (its caches filled while the older query is paused)
    expect(answerOf(engine, body)).toEqual(oraclePost(rowsAfter, table, body));
    const page = await running;
    // the query went on after the batch: the rest of its work ran on the version it started on
    expect(resumedAfterBatch).toBe(true);
    const answered = { keys: keysOf(store, page.rows, extraRecords(admitted)), total: page.total };
    expect(answered).toEqual(oraclePost(rowsBefore, table, body));
    // the batch changed the answer: the query did not see it
    expect(oraclePost(rowsAfter, table, body)).not.toEqual(answered);
  });
});
