/**
 * Question: what does a live replica's delta cost? The change set the live benchmarks apply to a
 * dataset's snapshot: a deterministic mix (seeded) of updates of existing rows (a new name,
 * e-mail or status, the sort keys of Q1–Q8), inserts of new ids and deletes, a given fraction of
 * the rows (1% by default: 100,000 at 10M), in batches of 1,000 changes — the shape a publisher
 * following PostgreSQL at 1,000 changes/s hands a replica each second.
 */
import type { ChangeBatch, Change } from "../src/live/changes.ts";
import { lsnText } from "../src/live/changes.ts";
import { generateUsers } from "../src/generate/users.ts";
import { recordAt } from "../src/store/rows-json.ts";
import type { Store } from "../src/store/types.ts";

/** Changes per batch. */
export const BATCH_CHANGES = 1000;

/** A small deterministic PRNG (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The batches changing `fraction` of `store`'s rows: 50% updates (of name, e-mail or status,
 * picked at random), 25% inserts (new ids above the largest, values from the generator), 25%
 * deletes; each row changed at most once.
 * @param fraction of the rows, 0 < fraction ≤ 0.5
 */
export function changeBatches(store: Store, fraction: number, seed = 7): ChangeBatch[] {
  const n = store.rowCount;
  const next = random(seed);
  const count = Math.round(n * fraction);
  const keys = store.columns.get(store.schema.key)?.distinct as Float64Array;
  let nextId = keys[n - 1] + 1;
  const donors = generateUsers({ count: count + 1, seed: seed + 1 })[Symbol.iterator]();
  const touched = new Set<number>();
  const changes: Change[] = [];
  const pickRow = () => {
    for (;;) {
      const row = Math.floor(next() * n);
      if (!touched.has(row)) {
        touched.add(row);
        return row;
      }
    }
  };
  for (let i = 0; i < count; i++) {
    const kind = next();
    if (kind < 0.5) {
      const record = recordAt(store, pickRow());
      const donor = donors.next().value as { name: string; email: string; status: string };
      const field = next();
      if (field < 0.4) record.name = donor.name;
      else if (field < 0.8) record.email = donor.email;
      else record.status = record.status === "active" ? "inactive" : "active";
      changes.push({ op: "upsert", record });
    } else if (kind < 0.75) {
      const donor = donors.next().value as { name: string; email: string; status: string };
      changes.push({ op: "upsert", record: { id: nextId++, name: donor.name, email: donor.email, status: donor.status } });
    } else changes.push({ op: "delete", key: keys[pickRow()] });
  }
  const batches: ChangeBatch[] = [];
  for (let at = 0, b = 1; at < changes.length; at += BATCH_CHANGES, b++) {
    batches.push({ lsn: lsnText(0x1000000 + b * 0x1000), commitTime: Date.now(), changes: changes.slice(at, at + BATCH_CHANGES) });
  }
  return batches;
}
