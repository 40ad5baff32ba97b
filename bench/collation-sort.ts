/**
 * Question: how much faster is sortByCollation than sorting with collator.compare, on faker
 * names and emails from several locales? Usage: `bun bench/collation-sort.ts [sizes...]`
 * (default 100000 1000000); the collator baseline is skipped above 2,000,000 values (~30 s at
 * 10M). Prints one row per (column, size): milliseconds and how many values had no key.
 */
import { fakerDE, fakerEN, fakerES, fakerFR, fakerJA, fakerRU, fakerUK, type Faker } from "@faker-js/faker";
import { collator } from "../src/collation/collation.ts";
import { collationKey } from "../src/collation/sort-key.ts";
import { sortByCollation } from "../src/collation/sort.ts";

/** Locales mixed round-robin: accents, Cyrillic, CJK (the slow path), ASCII. */
const FAKERS: readonly Faker[] = [fakerEN, fakerDE, fakerFR, fakerES, fakerRU, fakerJA, fakerUK];

/** Largest size at which the collator baseline still runs. */
const BASELINE_LIMIT = 2_000_000;

/** n faker values of one kind, seeded (the same n gives the same data). */
function generate(kind: "name" | "email", n: number): string[] {
  for (let f = 0; f < FAKERS.length; f++) FAKERS[f].seed(20240 + f);
  const values = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const faker = FAKERS[i % FAKERS.length];
    values[i] = kind === "name" ? faker.person.fullName() : faker.internet.email();
  }
  return values;
}

/** Milliseconds taken by `run`. */
function time(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(100_000, 1_000_000);
const rows: Record<string, string | number>[] = [];
for (const n of sizes) {
  for (const kind of ["name", "email"] as const) {
    const generateMs = time(() => undefined);
    const start = performance.now();
    const values = generate(kind, n);
    const generated = performance.now() - start;
    let noKey = 0;
    for (let i = 0; i < n; i++) if (collationKey(values[i]) === null) noKey++;
    let fast: Uint32Array = new Uint32Array(0);
    const fastMs = time(() => {
      fast = sortByCollation(values).order;
    });
    let baselineMs = Number.NaN;
    let same = "n/a";
    if (n <= BASELINE_LIMIT) {
      const indexes = Array.from({ length: n }, (_, i) => i);
      baselineMs = time(() => indexes.sort((a, b) => collator.compare(values[a], values[b]) || a - b));
      same = String(indexes.every((row, k) => row === fast[k]));
    }
    rows.push({
      column: kind,
      n,
      "generate ms": Math.round(generated + generateMs),
      "no key": noKey,
      "sortByCollation ms": Math.round(fastMs),
      "collator sort ms": Number.isNaN(baselineMs) ? "skipped" : Math.round(baselineMs),
      speedup: Number.isNaN(baselineMs) ? "" : `${(baselineMs / fastMs).toFixed(1)}x`,
      "same order": same,
    });
    console.error(JSON.stringify(rows[rows.length - 1]));
  }
}
console.table(rows);
