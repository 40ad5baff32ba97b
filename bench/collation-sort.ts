/**
 * Question: how much faster is sortByCollation than sorting with collator.compare, on faker
 * names and emails mixed from several locales (en, de, fr, es, ru, uk, ja)?
 * Usage: `bun bench/collation-sort.ts [size...]` (default: 100000 1000000). The collator
 * baseline (about 30 s at 10M) runs only up to BASELINE_LIMIT values; where it runs, the
 * results are checked to be identical (order and ranks). Prints one row per column and size:
 * milliseconds of each sort (after a full GC) and how many values had no collation key (the
 * slow path). Wall-clock times: run on an idle machine. Strings are flattened before timing.
 */
import { type Faker, fakerDE, fakerEN, fakerES, fakerFR, fakerJA, fakerRU, fakerUK } from "@faker-js/faker";
import { collator } from "../src/collation/collation.ts";
import { collationKey } from "../src/collation/sort-key.ts";
import { sortByCollation } from "../src/collation/sort.ts";

/** Locales mixed round-robin: ASCII, accents, Cyrillic, and CJK (which takes the slow path). */
const FAKERS: readonly Faker[] = [fakerEN, fakerDE, fakerFR, fakerES, fakerRU, fakerUK, fakerJA];

/** Largest size at which the collator baseline still runs. */
const BASELINE_LIMIT = 2_000_000;

/** n faker values of one kind, seeded: the same n gives the same data. */
function generate(kind: "name" | "email", n: number): string[] {
  for (let f = 0; f < FAKERS.length; f++) FAKERS[f].seed(20240 + f);
  const values = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const faker = FAKERS[i % FAKERS.length];
    values[i] = kind === "name" ? faker.person.fullName() : faker.internet.email();
  }
  return values;
}

/** The baseline: indexes sorted by collator.compare, ties by index, and dense ranks along them. */
function collatorSort(values: readonly string[]): { order: Uint32Array; ranks: Uint32Array } {
  const n = values.length;
  const indexes = Array.from({ length: n }, (_, i) => i);
  indexes.sort((a, b) => collator.compare(values[a], values[b]) || a - b);
  const order = Uint32Array.from(indexes);
  const ranks = new Uint32Array(n);
  for (let k = 1, rank = 0; k < n; k++) {
    if (collator.compare(values[order[k - 1]], values[order[k]]) !== 0) rank++;
    ranks[order[k]] = rank;
  }
  return { order, ranks };
}

/** Whether two typed arrays hold the same numbers. */
function same(a: Uint32Array, b: Uint32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(100_000, 1_000_000);
const rows: Record<string, string | number>[] = [];
for (const n of sizes) {
  for (const kind of ["name", "email"] as const) {
    const values = generate(kind, n);
    // faker builds strings by concatenation (ropes); flatten them, as the store build's JSON
    // and fold passes do before it sorts
    let units = 0;
    for (let i = 0; i < n; i++) units += values[i].charCodeAt(0) >= 0 ? values[i].length : 0;
    let noKey = 0;
    for (let i = 0; i < n; i++) if (collationKey(values[i]) === null) noKey++;
    Bun.gc(true); // collect the fresh strings first, so neither sort pays for that
    let start = performance.now();
    const fast = sortByCollation(values);
    const fastMs = performance.now() - start;
    let baselineMs = Number.NaN;
    let identical = "not checked";
    if (n <= BASELINE_LIMIT) {
      Bun.gc(true);
      start = performance.now();
      const slow = collatorSort(values);
      baselineMs = performance.now() - start;
      identical = String(same(fast.order, slow.order) && same(fast.ranks, slow.ranks));
    }
    rows.push({
      column: kind,
      n,
      "mean length": Math.round(units / n),
      "no key": noKey,
      "sortByCollation ms": Math.round(fastMs),
      "collator sort ms": Number.isNaN(baselineMs) ? "skipped" : Math.round(baselineMs),
      speedup: Number.isNaN(baselineMs) ? "" : `${(baselineMs / fastMs).toFixed(1)}x`,
      identical,
    });
  }
}
console.table(rows);
