/**
 * Question: what does a restricted role's version token (engine/view-version.ts) cost?
 *
 * On the access bench's dataset (generated users with `org_id`, 20 values, and `tenant`, 10,000
 * values; bench/access.ts builds and caches it), in process:
 * - from scratch (the first request of a view per snapshot): an organisation's rows (1/20 of the
 *   table) with every column but `email`; every row without `email` (a column-only role); one
 *   tenant's rows (1/10,000), every column: ms each, median of 5;
 * - asked again for the same version (every later request): µs per call;
 * - over a live replica: a batch of 100 upserts of random rows applied, then the token of each
 *   role brought up to date from the last one: ms per batch, median of 20.
 *
 * Usage: `flock /tmp/bench.lock bun bench/version-token.ts [--rows 1m]` (run bench/access.ts once
 * first with the same --rows to build the dataset).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Engine, applyChanges, createEngine, filterResultOf } from "../src/engine/execute.ts";
import { viewVersion } from "../src/engine/view-version.ts";
import { lsnText } from "../src/live/changes.ts";
import { parsePostBody } from "../src/query/post.ts";
import type { Predicate } from "../src/query/types.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { projectionOf } from "../src/store/record-fields.ts";
import { recordAt } from "../src/store/rows-json.ts";
import { CACHE_ROOT, parseSize, prng, sizeLabel } from "./datasets.ts";

const { values: args } = parseArgs({ options: { rows: { type: "string", default: "1m" } } });
const ROWS = parseSize(args.rows as string);
const path = join(CACHE_ROOT, "access", `users-orgs-${sizeLabel(ROWS)}.snap`);
if (!existsSync(path)) throw new Error(`${path} is missing: run bun bench/access.ts --rows ${args.rows} --only http first`);
const { store } = loadSnapshot(path);
const schema = store.schema;

const filterOf = (model: Record<string, unknown>): Predicate | null => parsePostBody({ filterModel: model }, 1, schema, { window: false, sort: false }).query.filter;
const noEmail = projectionOf(
  schema,
  schema.columns.filter((c) => c.id !== "email").map((c) => c.id),
);
const scopes = {
  "org (1/20), no email": { filter: filterOf({ org_id: { filterType: "number", type: "equals", filter: 7 } }), projection: noEmail, unrestricted: false },
  "every row, no email": { filter: null, projection: noEmail, unrestricted: false },
  "tenant (1/10,000), every column": { filter: filterOf({ tenant: { filterType: "number", type: "equals", filter: 4242 } }), projection: null, unrestricted: false },
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`version token, ${sizeLabel(ROWS)} rows (${store.rowCount}); ${Bun.version}`);

for (const [name, scope] of Object.entries(scopes)) {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    // a new engine each time (no anchor kept), its filter evaluated before the clock starts
    const engine = createEngine(store);
    filterResultOf(engine, scope.filter);
    const copy = { ...scope };
    const t0 = performance.now();
    viewVersion(engine, copy);
    times.push(performance.now() - t0);
  }
  const engine = createEngine(store);
  viewVersion(engine, scope);
  const n = 100_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) viewVersion(engine, scope);
  const again = ((performance.now() - t0) * 1000) / n;
  console.log(`${name}: from scratch ${median(times).toFixed(1)} ms; again ${again.toFixed(3)} µs`);
}

// live batches: 100 upserts of random rows (their name changed), each role's token brought up to date
const random = prng(7);
let engine: Engine = createEngine(store);
for (const scope of Object.values(scopes)) viewVersion(engine, scope);
const perBatch: Record<string, number[]> = Object.fromEntries(Object.keys(scopes).map((k) => [k, []]));
for (let b = 0; b < 20; b++) {
  const changes = Array.from({ length: 100 }, () => {
    const record = recordAt(store, random() % store.rowCount) as Record<string, unknown>;
    return { op: "upsert" as const, record: { ...record, name: `${record.name as string} ${b}` } };
  });
  engine = applyChanges(engine, { lsn: lsnText(0x100 * (b + 1)), commitTime: Date.now(), changes });
  for (const [name, scope] of Object.entries(scopes)) {
    const t0 = performance.now();
    viewVersion(engine, scope);
    perBatch[name].push(performance.now() - t0);
  }
}
for (const [name, times] of Object.entries(perBatch)) console.log(`${name}: a batch of 100 upserts, brought up to date in ${median(times).toFixed(2)} ms (median of 20)`);
