/**
 * Question: is a table that is not the default data's shape served as fast? A users table keyed
 * by a UUID `user_id` (text, ordered by code point), a `status` of six values, `name`, no
 * `email`, and the wide table's other columns (`created_at`, `birthday`, `role`, `age`,
 * `verified`, `notes`): sorted pages on every sortable column (first, middle and last page,
 * both directions), the status filter with a name sort (Q8's shape, against Q8 on the default
 * data's snapshot of the same size in the same run), and a 3-letter contains on every text
 * column (the key included) through its trigram lists, with the plan that ran.
 *
 * Usage: `bun bench/generic.ts --rows 10m [--budget 1000] [--out FILE]`. The table is built once
 * into bench/.cache/generic-<rows>.snap (a few minutes at 10M); Q8 is timed on the benchmark's
 * default-data snapshot of the same size when bench/datasets.ts has built it.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { appendString, finishByteColumn, growingByteColumn } from "../src/bits/byte-column.ts";
import { createEngine, executeQuery, explain } from "../src/engine/execute.ts";
import { generateUsers } from "../src/generate/users.ts";
import type { Query } from "../src/query/types.ts";
import { parseDate, parseDateTime } from "../src/schema/values.ts";
import { buildStoreParallel } from "../src/store/build.ts";
import type { ColumnInput, TableInput } from "../src/store/input.ts";
import { rowsToJson } from "../src/store/rows-json.ts";
import type { Store } from "../src/store/types.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import { writeSnapshotAsync } from "../src/snapshot/write.ts";
import { CACHE_ROOT, datasetPaths, parseSize, sizeLabel } from "./datasets.ts";
import { budgetLoop, formatMs, summarize } from "./measure.ts";

const { values: args } = parseArgs({ options: { rows: { type: "string", default: "1m" }, budget: { type: "string", default: "1000" }, out: { type: "string" } } });
const rows = parseSize(args.rows as string);
const budget = Number(args.budget);
const lines: string[] = [];
const say = (line = "") => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

/** The six statuses, in their declared order, and each one's share of the rows (per mille). */
const STATUSES = ["active", "invited", "suspended", "deleted", "pending", "locked"] as const;
const STATUS_SHARE = [700, 120, 60, 50, 50, 20];

/** A deterministic v4-shaped UUID of row i (lower-case hex): a 128-bit mix of i and a seed. */
function uuidOf(i: number): string {
  let h = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  const hex: string[] = [];
  for (let k = 0; k < 4; k++) {
    h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
    h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
    h = (h ^ (h >>> 16) ^ (i * 2654435761 + k)) >>> 0;
    hex.push(h.toString(16).padStart(8, "0"));
  }
  const s = hex.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-a${s.slice(17, 20)}-${s.slice(20, 32)}`;
}

/** Builds the generic table from the generator's wide users: the key, the six statuses, no email. */
function genericTable(n: number): TableInput {
  const keys = growingByteColumn(n, n * 36);
  const names = growingByteColumn(n, n * 16);
  const notes = growingByteColumn(n, n * 40);
  const notesNull = new Uint8Array(n);
  const status = new Uint8Array(n);
  const role = new Uint8Array(n);
  const created = new Float64Array(n);
  const birthday = new Float64Array(n);
  const age = new Float64Array(n);
  const verified = new Uint8Array(n);
  const roles = ["owner", "admin", "member", "viewer"];
  let i = 0;
  for (const u of generateUsers({ count: n, seed: 7, wide: true })) {
    appendString(keys, uuidOf(i));
    appendString(names, u.name);
    // a status by share, from the row's id (deterministic)
    let slot = Math.imul(u.id, 2654435761) >>> 0;
    slot %= 1000;
    let s = 0;
    while (slot >= STATUS_SHARE[s]) slot -= STATUS_SHARE[s++];
    status[i] = s + 1;
    role[i] = roles.indexOf(u.role) + 1;
    created[i] = parseDateTime(u.created_at);
    birthday[i] = u.birthday === null ? Number.NaN : parseDate(u.birthday);
    age[i] = u.age ?? Number.NaN;
    verified[i] = u.verified ? 2 : 1;
    if (u.notes === null) notesNull[i] = 1;
    appendString(notes, u.notes ?? "");
    i++;
  }
  const none = new Uint8Array(n);
  const columns: ColumnInput[] = [
    { spec: { id: "user_id", kind: "text" }, values: { kind: "text", strings: finishByteColumn(keys), isNull: none, nulls: 0 } },
    { spec: { id: "name", kind: "text" }, values: { kind: "text", strings: finishByteColumn(names), isNull: none, nulls: 0 } },
    { spec: { id: "status", kind: "enum", values: [...STATUSES] }, values: { kind: "enum", codes: status, values: [...STATUSES], nulls: 0 } },
    { spec: { id: "created_at", kind: "datetime" }, values: { kind: "datetime", values: created, nulls: 0 } },
    { spec: { id: "birthday", kind: "date" }, values: { kind: "date", values: birthday, nulls: 0 } },
    { spec: { id: "role", kind: "enum", values: roles }, values: { kind: "enum", codes: role, values: roles, nulls: 0 } },
    { spec: { id: "age", kind: "number" }, values: { kind: "number", values: age, nulls: 0 } },
    { spec: { id: "verified", kind: "boolean" }, values: { kind: "boolean", codes: verified, values: ["false", "true"], nulls: 0 } },
    { spec: { id: "notes", kind: "text" }, values: { kind: "text", strings: finishByteColumn(notes), isNull: notesNull, nulls: 0 } },
  ];
  return { rows: n, columns, key: "user_id" };
}

/** The generic table's snapshot, built into the cache when absent. */
async function genericSnapshot(n: number): Promise<string> {
  mkdirSync(CACHE_ROOT, { recursive: true });
  const path = join(CACHE_ROOT, `generic-${sizeLabel(n)}.snap`);
  if (existsSync(path)) {
    try {
      loadSnapshot(path, { verify: false });
      return path;
    } catch {
      // an older format: built again
    }
  }
  const t = performance.now();
  const store = await buildStoreParallel(genericTable(n));
  await writeSnapshotAsync(path, store);
  say(`built ${path} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return path;
}

/** p50 / p99 of a query, serialization included, over a time budget. */
async function timed(store: Store, query: Query, fresh: boolean): Promise<{ p50: number; p99: number; total: number }> {
  let engine = createEngine(store);
  let total = 0;
  const times = await budgetLoop(budget, async () => {
    if (fresh) engine = createEngine(store);
    const t = performance.now();
    const page = executeQuery(engine, query);
    rowsToJson(store, page.rows);
    const ms = performance.now() - t;
    total = page.total;
    return ms;
  });
  const s = summarize(times);
  return { p50: s.p50_ms, p99: s.p99_ms, total };
}

const key = (column: string, direction: "asc" | "desc") => ({ column, direction, absolute: false });

const path = await genericSnapshot(rows);
const { store } = loadSnapshot(path);
say(`# A generic users table at ${sizeLabel(rows)} rows`);
say();
say(`Keyed by a UUID \`user_id\` (text, code-point order), \`status\` of ${STATUSES.length} values (the partition: ${store.schema.partition}), no email; columns: ${store.schema.columns.map((c) => `${c.id} ${c.kind}`).join(", ")}.`);
say(`\`bun bench/generic.ts --rows ${args.rows}\`; p50 / p99 of 100-row pages, serialized; budget ${budget} ms a series.`);
say();
say("## Sorted pages on every sortable column");
say();
say("| column | first page asc | middle page desc | last page asc |");
say("|---|---|---|---|");
let worstP99 = 0;
for (const spec of store.schema.columns) {
  const cells: string[] = [];
  for (const [offset, direction] of [[0, "asc"], [Math.floor(rows / 2), "desc"], [rows - 100, "asc"]] as const) {
    const r = await timed(store, { filter: null, sort: [key(spec.id, direction)], offset, limit: 100 }, false);
    worstP99 = Math.max(worstP99, r.p99);
    cells.push(`${formatMs(r.p50)} / ${formatMs(r.p99)}`);
  }
  say(`| ${spec.id} (${spec.kind}) | ${cells.join(" | ")} |`);
}
say();
say(`Worst p99 over every sortable column: ${formatMs(worstP99)}.`);
say();
say("## Q8's shape: status with a name sort");
say();
// Q4's offset, 10,000, within the suspended rows (6% of the table)
const suspendedOffset = Math.max(0, Math.min(10_000, Math.floor(rows * 0.06) - 200));
const shapes: [string, Query][] = [
  ["sort status asc, name desc, offset N/2", { filter: null, sort: [key("status", "asc"), key("name", "desc")], offset: Math.floor(rows / 2), limit: 100 }],
  [`status = suspended, sort name desc, offset ${suspendedOffset}`, { filter: { kind: "column", column: "status", test: { op: "set", values: ["suspended"], nulls: false } }, sort: [key("name", "desc")], offset: suspendedOffset, limit: 100 }],
];
const generic: number[] = [];
for (const [title, query] of shapes) {
  const r = await timed(store, query, false);
  generic.push(r.p50);
  say(`- ${title}: ${formatMs(r.p50)} / ${formatMs(r.p99)} (${r.total} rows; plan ${explain(createEngine(store), query, false).plan.op} on ${explain(createEngine(store), query, false).plan.index})`);
}
const seed = datasetPaths(rows).snapshot;
if (existsSync(seed)) {
  const seedStore = loadSnapshot(seed).store;
  const q8 = await timed(seedStore, { filter: null, sort: [key("status", "asc"), key("name", "desc")], offset: Math.floor(rows / 2), limit: 100 }, false);
  say(`- Q8 on the default data's ${sizeLabel(rows)} snapshot, same run: ${formatMs(q8.p50)} / ${formatMs(q8.p99)}; the generic table's Q8 shape is ${(generic[0] / q8.p50).toFixed(2)}× it`);
} else say(`- (Q8 on the default data: ${seed} is not built; \`bun bench/datasets.ts ${args.rows}\` builds it)`);
say();
say("## A 3-letter contains on every text column (first request: a fresh engine each run)");
say();
const needles: Record<string, string> = { user_id: "3f2", name: "mar", notes: "exp" };
for (const spec of store.schema.columns.filter((c) => c.kind === "text")) {
  const needle = needles[spec.id] ?? "abc";
  const query: Query = { filter: { kind: "column", column: spec.id, test: { op: "text", type: "contains", value: needle } }, sort: [key("name", "asc")], offset: 0, limit: 100 };
  const r = await timed(store, query, true);
  const plan = explain(createEngine(store), query, true).plan;
  say(`- ${spec.id} contains "${needle}": ${formatMs(r.p50)} / ${formatMs(r.p99)}, ${r.total} rows; plan ${plan.op} over ${plan.children?.[0].op} (${plan.children?.[0].index ?? "–"})`);
}
if (args.out !== undefined) writeFileSync(args.out as string, `${lines.join("\n")}\n`);
