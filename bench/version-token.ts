/**
 * Question: what does a restricted role's version token (engine/view-version.ts) cost?
 *
 * On the access bench's dataset (generated users with `org_id`, 20 values, and `tenant`, 10,000
 * values; bench/access.ts builds and caches it), in process:
 * - from scratch (the first request of a view per snapshot): an organisation's rows (1/20 of the
 *   table) with every column but `email`; every row without `email` (a column-only role); one
 *   tenant's rows (1/10,000), every column: ms each, median of 5;
 * - asked again for the same version (every later request): µs per call;
 * - through the query service (service/pipeline.ts), the first request of a role that sees every
 *   row but `email`, while a tenant's role (its token known) asks for a page on every event-loop
 *   turn: how long the first request takes, the longest gap between two of the tenant's answers
 *   (the longest a request arriving meanwhile waits), and the tenant's answers meanwhile (median
 *   of 5, each on a freshly loaded store, nothing of a token kept);
 * - over a live replica: a batch of 100 upserts of random rows applied, then the token of each
 *   role brought up to date from the last one: ms per batch, median of 20.
 *
 * Usage: `flock /tmp/bench.lock bun bench/version-token.ts [--rows 1m]` (run bench/access.ts once
 * first with the same --rows to build the dataset).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pino from "pino";
import type { Grant } from "../src/access/control.ts";
import { parsePolicy } from "../src/access/policy.ts";
import { compileView } from "../src/access/view.ts";
import { type Engine, applyChanges, createEngine, filterResultOf } from "../src/engine/execute.ts";
import { viewVersion, viewVersionFromScratch } from "../src/engine/view-version.ts";
import { createQueryService } from "../src/service/pipeline.ts";
import { rowsGet } from "../src/service/routes.ts";
import type { Store } from "../src/store/types.ts";
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
    const t0 = performance.now();
    viewVersionFromScratch(engine, scope);
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

// the first token of a large scope through the service, while another role's requests arrive
const policyText = JSON.stringify({
  jwt: { secret: "s".repeat(40) },
  roles: {
    wide: { columns: schema.columns.filter((c) => c.id !== "email").map((c) => c.id) },
    tenant: { columns: "*", filterModel: { tenant: { filterType: "number", type: "equals", filter: 4242 } } },
  },
});
/** The grant of role `name` over `of`'s schema. */
const grantOf = (of: Store, name: string): Grant => {
  const policy = parsePolicy(policyText, "policy.json", of.schema, { dir: "." });
  const role = policy.roles.get(name);
  if (role === undefined) throw new Error(`no role ${name}`);
  const view = compileView(role, {}, of.schema, policy.id);
  if ("reason" in view) throw new Error(view.detail);
  return { principal: { role, claims: {} }, view };
};
const page = () => new Request("http://localhost/api/users?pageSize=20");
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const runs: { first: number; longest: number; answered: number }[] = [];
for (let i = 0; i < 5; i++) {
  const fresh = loadSnapshot(path).store;
  const on = createEngine(fresh);
  const service = createQueryService({ engine: () => on, maxPageSize: 1000, logger: pino({ level: "silent" }), access: null });
  const wide = grantOf(fresh, "wide");
  const tenant = grantOf(fresh, "tenant");
  // the tenant's token and filter known, its page cheap
  await service.handle(rowsGet, page(), tenant);
  await service.handle(rowsGet, page(), tenant);
  let done = false;
  let answered = 0;
  const t0 = performance.now();
  let last = t0;
  let longest = 0;
  let first = 0;
  const answer = Promise.resolve(service.handle(rowsGet, page(), wide)).then((r) => {
    first = performance.now() - t0;
    done = true;
    return r;
  });
  while (!done) {
    await turn();
    const now = performance.now();
    longest = Math.max(longest, now - last);
    const r = await service.handle(rowsGet, page(), tenant);
    if (r.status !== 200) throw new Error(`the tenant's page answered ${r.status}`);
    if (!done) answered++;
    last = performance.now();
  }
  if ((await answer).status !== 200) throw new Error("the wide role's page failed");
  runs.push({ first, longest, answered });
}
console.log(
  `first request of "every row, no email" through the service: ${median(runs.map((r) => r.first)).toFixed(1)} ms; longest wait of the tenant's requests meanwhile ${median(runs.map((r) => r.longest)).toFixed(2)} ms; tenant's answers meanwhile ${median(runs.map((r) => r.answered))} (median of 5)`,
);
