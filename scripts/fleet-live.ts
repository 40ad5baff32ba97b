/**
 * The live fleet (docs/operations.md "Live replicas"), bounded and on loopback only: a live
 * table's committed changes reach every replica behind nginx, exactly and whole, while everything
 * is under load and the publisher and a replica are killed; it measures freshness (a commit →
 * visible on every replica) and how fast a burst of changes goes through.
 *
 * - PostgreSQL with `wal_level = logical` and a `users` table of `--rows` rows (the scheduled
 *   fleet's seven columns, `status` an enum as in the seed, plus `grp`, indexed, and `amount`),
 *   a tick row (id 0) and 20 accounts;
 * - the publisher `snapshot follow` to `s3://fleet/users` on s3rver (or `--location dir`),
 *   `--batch-ms`, `--compact-seconds`;
 * - two replicas `serve --source <location> --poll <--poll>` behind nginx (deploy/nginx.conf);
 * - wrk through nginx for `--seconds` with the cheap mix of bench/http.ts (GET and POST);
 * - a change stream during the load, `--rate` row changes a second on one connection, in
 *   transactions of one statement (a simple query: one transaction): inserts, deletes, updates of
 *   sort keys and of the key, multi-row updates, transfers between two accounts, and every
 *   100 ms a tick: a transaction inserting a group of 5 rows with `grp` = n and setting the tick
 *   row's `amount` to n. Groups are later moved (all 5 keys and names changed in one
 *   transaction, a new version in every name) and deleted (all 5 in one);
 * - a reader through nginx checking that no answer holds half a transaction: a group's rows,
 *   asked by GET and by POST, are 0 or 5, all of one version; the accounts are all there and
 *   their amounts always sum to the same total, in amount order;
 * - a prober per replica, asking it directly for the tick row every 10 ms: when each tick became
 *   visible there (freshness is commit → visible on both replicas), and that a replica's tick
 *   never goes back (at a new snapshot, or after a restart: it must not serve a snapshot without
 *   the changes listed after it);
 * - with `--kills both` (the default): the publisher killed with SIGKILL a quarter into the load
 *   and started again, then one replica killed with SIGKILL and started again past the middle;
 * - 80% into the load, a burst: `--burst` existing rows (ids 1 … --burst, rows the stream leaves
 *   alone) updated (their age) in transactions of 10,000 rows sent back to back on a connection
 *   of their own, the stream going on meanwhile.
 *   Its throughput is the rows changed over the time from its first statement to both replicas
 *   showing the first tick sent after its last commit; the replicas' own apply rate is summed
 *   from their logs (each batch applied: its changes and milliseconds, at LOG_LEVEL=debug).
 *
 * - change events (scripts/fleet-events.ts): a listener of `GET /api/users/changes` on each
 *   replica and one through nginx, each connecting again with `Last-Event-ID` whenever its stream
 *   ends (a replica killed); the surviving replica's listener is also closed on purpose for a few
 *   ticks past the middle and must be sent what it missed. A second slot, decoded by PostgreSQL's
 *   `test_decoding`, records every committed transaction's keys and commit end independently.
 *
 * At the end the stream stops, a last tick is committed and awaited on both replicas, and each
 * replica's full export (`GET /api/users/export?format=ndjson`, straight to it) is compared, row
 * by row, with the table as PostgreSQL holds it (its values written in the API's formats).
 *
 * Passes when wrk saw no non-2xx answer and no socket error, no reader request failed, no reader
 * saw half a transaction, no replica went back, the kills fell inside the load, both exports equal
 * PostgreSQL's rows, the slot's confirmed LSN advanced, the publisher stopped on SIGTERM with
 * exit code 0, and every transaction the second slot saw was announced to every listener: the
 * first `change` event at or past its commit lists all its keys, or is a `"keys": null` refresh. Freshness is reported (p50, p99, max) over the ticks whose way to both replicas
 * did not cross a kill or the burst, and over all of them; so is commit → the event announcing it
 * at the listener on each replica (the later of the two). Exits 1 on FAIL.
 *
 *   bun scripts/fleet-live.ts [--rows 200000] [--seconds 60] [--location s3|dir] [--poll 0.25]
 *                             [--rate 500] [--batch-ms 500] [--compact-seconds 20] [--kills both|none]
 *                             [--burst 100000]
 *
 * test/live/fleet.test.ts runs it in `npm test` at 20,000 rows for 40 s.
 *
 * Needs PostgreSQL, nginx and wrk (`npm test`'s pretest installs them; or
 * `sh scripts/install-postgres.sh` and `sh scripts/install-fleet-tools.sh`). It is a named
 * scenario, not part of `npm test` (test/live/follow.test.ts covers the same faults without the
 * load). The machinery is scripts/fleet-harness.ts, shared with scripts/fleet-test.ts.
 * Measured figures: bench/results/live-fleet.md; with change events, bench/results/live-fleet-events.md.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import postgres from "postgres";
import { lsnValue } from "../src/live/changes.ts";
import { prng } from "../bench/datasets.ts";
import { cheapMixOf, requestLine } from "../bench/http.ts";
import { type Announcement, type CommittedTransaction, type Oracle, checkAnnounced, createOracle, pauseListener, startListener, stopListener, versionLsn } from "./fleet-events.ts";
import { CLI, ROOT, createLog, createUsersTable, freePort, getJson, openFleet, readyId, s, tail, waitFor, wrkSummary } from "./fleet-harness.ts";
import { pollUntil } from "../test/support/poll.ts";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "200000" },
    seconds: { type: "string", default: "60" },
    location: { type: "string", default: "s3" },
    poll: { type: "string", default: "0.25" },
    rate: { type: "string", default: "500" },
    "batch-ms": { type: "string", default: "500" },
    "compact-seconds": { type: "string", default: "20" },
    kills: { type: "string", default: "both" },
    burst: { type: "string", default: "100000" },
  },
});
const rows = Number(values.rows);
const seconds = Number(values.seconds);
const poll = Number(values.poll);
const rate = Number(values.rate);
const batchMs = Number(values["batch-ms"]);
const compactSeconds = Number(values["compact-seconds"]);
const burst = Number(values.burst);
if (values.location !== "s3" && values.location !== "dir") throw new Error(`--location: s3 or dir (got ${values.location})`);
if (values.kills !== "both" && values.kills !== "none") throw new Error(`--kills: both or none (got ${values.kills})`);
for (const [name, value] of Object.entries({ rows, seconds, rate, "batch-ms": batchMs })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name}: a positive integer (got ${value})`);
}
if (!Number.isInteger(compactSeconds) || compactSeconds < 0) throw new Error(`--compact-seconds: an integer ≥ 0 (got ${compactSeconds})`);
if (!Number.isInteger(burst) || burst < 0 || burst > rows / 2) throw new Error(`--burst: an integer from 0 to half of --rows (the stream changes the other rows; got ${values.burst})`);
if (!(poll > 0)) throw new Error(`--poll: a positive number of seconds (got ${values.poll})`);
const kills = values.kills === "both";

/** Rows per group: what a reader must see all or none of. */
const GROUP = 5;
/** Accounts (`grp` = 0) and each one's starting amount: their sum never changes. */
const ACCOUNTS = 20;
const ACCOUNT_START = 1000;
/** A tick (a group inserted, the tick row set to its number) every this many ms. */
const TICK_MS = 100;
/** Transactions sent on the generator's connection before the first has answered (pipelined, run in order). */
const IN_FLIGHT = 8;
/** The tick row's key. */
const TICK_ID = 0;
/** Rows per transaction of the burst. */
const BURST_TRANSACTION = 10_000;

const log = createLog("fleet-live");
const fleet = openFleet("fleet-live", { log, logical: true }); // before s3rver: PostgreSQL starts blocking (spawnSync)
const { dir, sql, replicas } = fleet;
const generatorSql = postgres(fleet.pg.url, { max: 1, onnotice: () => {} });
const burstSql = postgres(fleet.pg.url, { max: 1, onnotice: () => {} });

/** `'text'` as an SQL literal. */
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** The p-th quantile (0…1) of sorted values, or NaN. */
const quantile = (sorted: number[], p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]);
const ms = (x: number) => `${Math.round(x)} ms`;

/** The 1, 5 and 15 minutes load averages of the machine (other work on it shows there). */
const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** The pino lines of a log file, parsed (others skipped). */
function logLines(file: string): { msg?: string; time?: number; [key: string]: unknown }[] {
  if (!existsSync(file)) return [];
  const out = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    try {
      out.push(JSON.parse(line));
    } catch {}
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The change stream: transactions at `--rate` row changes a second, the generator's own state
// (which keys exist) updated as each is sent (one connection runs them in the order sent)

const FIRST = ["Zoë", "Åsa", "Émile", "Ana", "bob", "Çelik", "Øystein", "Ígor", "Łucja", "Noémie", "Jürgen", "Mia", "Ōta", "李", "Олег"];
const LAST = ["Ångström", "Nguyễn", "O'Brien", "Smith", "de la Cruz", "Müller", "Zhang", "Østby", "van Dijk", "Abe"];
const ROLES = ["owner", "admin", "member", "viewer"];

/** A group of the stream: its number, its rows' keys, its version (in every row's name). */
interface Group {
  n: number;
  ids: number[];
  version: number;
}

/** A tick: its number, and when its transaction was sent and when its commit was answered (Date.now() ms). */
interface Tick {
  n: number;
  sentAt: number;
  committedAt: number | null;
}

const random = prng(0x5eed);
const below = (n: number) => random() % n;
let nextId = rows + ACCOUNTS + 1;
/** Keys of the plain rows (not the tick row, an account or a group's), first `plainCount` of it. */
// ids 1 … --burst are the burst's alone: no transaction of the stream locks one of its rows (a
// deadlock between the two would end the stream)
let plain = new Float64Array(rows - burst + 4096);
let plainCount = rows - burst;
for (let i = 0; i < plainCount; i++) plain[i] = burst + i + 1;
const accounts = Array.from({ length: ACCOUNTS }, (_, i) => rows + 1 + i);
/** Live groups, oldest first. */
const groups: Group[] = [];
/** Group numbers whose insert has committed, in order (the reader asks for these). */
const committedGroups: number[] = [];
const ticks: Tick[] = [];
const stream = { sent: 0, committed: 0, transactions: 0, startedAt: 0, endedAt: 0, stopping: false, errors: [] as string[] };

const addPlain = (id: number) => {
  if (plainCount === plain.length) {
    const grown = new Float64Array(plain.length * 2);
    grown.set(plain);
    plain = grown;
  }
  plain[plainCount++] = id;
};
const name = () => `${FIRST[below(FIRST.length)]} ${LAST[below(LAST.length)]}`;
const createdAt = () => new Date(Date.UTC(2020, 0, 1) + below(2 ** 31) * 1000 + below(1000)).toISOString();
/** A whole new plain row's values, in the table's column order. */
const rowValues = (id: number) =>
  `(${id}, ${lit(`${name()} ${id}`)}, ${lit(`u${id}.${below(100)}@example.org`)}, ${lit(below(3) === 0 ? "inactive" : "active")}, ${lit(ROLES[below(4)])}, ${18 + below(60)}, ${lit(createdAt())}, NULL, ${below(1000)})`;

/** One transaction: its SQL (statements run as one transaction), its row changes, and what its commit tells. */
interface Transaction {
  sql: string;
  changes: number;
  committed?: (at: number) => void;
}

/** A tick: a new group of GROUP rows, and the tick row set to its number. */
function tickTransaction(): Transaction {
  const n = ticks.length + 1;
  const ids = Array.from({ length: GROUP }, () => nextId++);
  const tick: Tick = { n, sentAt: Date.now(), committedAt: null };
  ticks.push(tick);
  groups.push({ n, ids, version: 0 });
  const values = ids.map((id, i) => `(${id}, ${lit(`Group ${n} v0 #${i}`)}, ${lit(`g${n}.${i}@example.org`)}, 'active', 'member', ${18 + below(60)}, ${lit(createdAt())}, ${n}, ${below(1000)})`);
  return {
    sql: `INSERT INTO users VALUES ${values.join(", ")}; UPDATE users SET amount = ${n} WHERE id = ${TICK_ID}`,
    changes: GROUP + 1,
    committed: (at) => {
      tick.committedAt = at;
      committedGroups.push(n);
    },
  };
}

/** Any other transaction of the mix (see the module comment). */
function otherTransaction(): Transaction {
  const kind = below(100);
  if (kind < 20) {
    const id = nextId++;
    addPlain(id);
    return { sql: `INSERT INTO users VALUES ${rowValues(id)}`, changes: 1 };
  }
  if (kind < 35 && plainCount > 1) {
    const i = below(plainCount);
    const id = plain[i];
    plain[i] = plain[--plainCount];
    return { sql: `DELETE FROM users WHERE id = ${id}`, changes: 1 };
  }
  if (kind < 60) {
    // sort keys: one to three of the sortable columns
    const sets = [`name = ${lit(name())}`, `email = ${lit(`v${below(1e6)}@example.net`)}`, `age = ${18 + below(60)}`, `status = ${lit(below(2) === 0 ? "inactive" : "active")}`, `role = ${lit(ROLES[below(4)])}`, `created_at = ${lit(createdAt())}`];
    const chosen = Array.from({ length: 1 + below(3) }, () => sets[below(sets.length)]);
    return { sql: `UPDATE users SET ${[...new Set(chosen)].join(", ")} WHERE id = ${plain[below(plainCount)]}`, changes: 1 };
  }
  if (kind < 70) {
    // the key
    const i = below(plainCount);
    const old = plain[i];
    plain[i] = nextId++;
    return { sql: `UPDATE users SET id = ${plain[i]} WHERE id = ${old}`, changes: 1 };
  }
  if (kind < 76) {
    // several rows in one transaction
    const statements = Array.from({ length: 5 }, () => `UPDATE users SET age = ${18 + below(60)}, name = ${lit(name())} WHERE id = ${plain[below(plainCount)]}`);
    return { sql: statements.join("; "), changes: 5 };
  }
  if (kind < 81 && groups.length > 0) {
    // a group moved: every key and name of it, one transaction
    const group = groups[below(groups.length)];
    group.version++;
    const statements = group.ids.map((old, i) => {
      group.ids[i] = nextId++;
      return `UPDATE users SET id = ${group.ids[i]}, name = ${lit(`Group ${group.n} v${group.version} #${i}`)}, age = ${18 + below(60)} WHERE id = ${old}`;
    });
    return { sql: statements.join("; "), changes: GROUP };
  }
  if (kind < 86 && groups.length > 8) {
    const group = groups.shift() as Group;
    return { sql: `DELETE FROM users WHERE grp = ${group.n}`, changes: GROUP };
  }
  // a transfer between two accounts: their sum stays
  const a = accounts[below(ACCOUNTS)];
  let b = accounts[below(ACCOUNTS)];
  if (b === a) b = accounts[(accounts.indexOf(a) + 1) % ACCOUNTS];
  const amount = 1 + below(100);
  return { sql: `UPDATE users SET amount = amount - ${amount} WHERE id = ${a}; UPDATE users SET amount = amount + ${amount} WHERE id = ${b}`, changes: 2 };
}

/** Runs the stream until `stream.stopping`; resolves once every transaction sent has answered. */
async function runStream(): Promise<void> {
  stream.startedAt = Date.now();
  let nextTickAt = stream.startedAt;
  const inFlight = new Set<Promise<void>>();
  while (!stream.stopping && stream.errors.length === 0) {
    const now = Date.now();
    const due = (rate * (now - stream.startedAt)) / 1000;
    let transaction: Transaction;
    if (now >= nextTickAt) {
      transaction = tickTransaction();
      nextTickAt = Math.max(nextTickAt + TICK_MS, now);
    } else if (stream.sent < due) transaction = otherTransaction();
    else {
      await Bun.sleep(Math.max(1, Math.min(nextTickAt - now, ((stream.sent + 1 - due) / rate) * 1000)));
      continue;
    }
    stream.sent += transaction.changes;
    const sent = generatorSql
      .unsafe(transaction.sql)
      .simple()
      .then(
        () => {
          stream.committed += transaction.changes;
          stream.transactions++;
          transaction.committed?.(Date.now());
        },
        (error: Error) => {
          stream.errors.push(`${error.message} in: ${transaction.sql.slice(0, 300)}`);
        },
      );
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
    if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  stream.endedAt = Date.now();
}

// ---------------------------------------------------------------------------------------------
// The reader: through nginx, checking that no answer holds half a transaction

const reader = {
  groupReads: 0,
  whole: 0,
  none: 0,
  movedSeen: 0,
  accountReads: 0,
  failures: [] as string[],
  halves: [] as string[],
  stopping: false,
};

/** The problems of a group's answer: 0 or GROUP rows, as many as the total says, all of one version. */
function groupProblem(n: number, body: { data?: { id: number; name: string; grp: number }[]; total?: number } | null): string | null {
  const data = body?.data;
  if (data === undefined || typeof body?.total !== "number") return `not a listing answer: ${JSON.stringify(body).slice(0, 200)}`;
  if (body.total !== 0 && body.total !== GROUP) return `group ${n}: ${body.total} of its ${GROUP} rows`;
  if (data.length !== body.total) return `group ${n}: total ${body.total} but ${data.length} rows`;
  const versions = new Set<string>();
  for (const row of data) {
    const m = /^Group (\d+) v(\d+) #\d$/.exec(row.name);
    if (m === null || Number(m[1]) !== n || row.grp !== n) return `group ${n}: a row not of it: ${JSON.stringify(row)}`;
    versions.add(m[2]);
  }
  if (versions.size > 1) return `group ${n}: rows of versions ${[...versions].join(" and ")} at once`;
  if (data.length === GROUP) {
    reader.whole++;
    if (!versions.has("0")) reader.movedSeen++;
  } else reader.none++;
  return null;
}

/** The problems of the accounts' answer: all ACCOUNTS rows, amounts summing to the start total, in amount order. */
function accountsProblem(body: { data?: { id: number; amount: number }[]; total?: number } | null): string | null {
  const data = body?.data;
  if (data === undefined) return `not a listing answer: ${JSON.stringify(body).slice(0, 200)}`;
  if (body?.total !== ACCOUNTS || data.length !== ACCOUNTS) return `accounts: total ${body?.total}, ${data.length} rows (of ${ACCOUNTS})`;
  const sum = data.reduce((a, r) => a + r.amount, 0);
  if (sum !== ACCOUNTS * ACCOUNT_START) return `accounts: amounts sum to ${sum}, not ${ACCOUNTS * ACCOUNT_START}: ${JSON.stringify(data.map((r) => [r.id, r.amount]))}`;
  for (let i = 1; i < data.length; i++) if (data[i].amount > data[i - 1].amount) return `accounts: not in amount order at ${i}: ${JSON.stringify(data.map((r) => r.amount))}`;
  return null;
}

/** One reader loop through nginx at `base`, until stopped. */
async function readLoop(base: string, offset: number): Promise<void> {
  for (let i = offset; !reader.stopping; i++) {
    const pick = i % 3;
    let request: Request;
    let n = -1;
    if (pick === 2 || committedGroups.length === 0) {
      request = new Request(`${base}/api/users?filter[grp]=0&pageSize=100&sortBy=amount&sortOrder=desc`);
    } else {
      // half the reads on the group just committed (the one most likely in flight), half on a recent one
      const recent = Math.min(64, committedGroups.length);
      n = i % 2 === 0 ? (committedGroups.at(-1) as number) : committedGroups[committedGroups.length - 1 - below(recent)];
      request =
        pick === 0
          ? new Request(`${base}/api/users?filter[grp]=${n}&pageSize=20&sortBy=name`)
          : new Request(`${base}/api/users`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ startRow: 0, endRow: 20, sortModel: [{ colId: "age", sort: "desc" }], filterModel: { grp: { filterType: "number", type: "equals", filter: n } } }),
            });
    }
    try {
      // no time limit here: nginx's own (deploy/nginx.conf) answers a request a replica never does
      const response = await fetch(request);
      const text = await response.text();
      if (response.status !== 200) {
        reader.failures.push(`${request.method} ${request.url}: ${response.status} ${text.slice(0, 200)}`);
        continue;
      }
      const body = JSON.parse(text);
      const problem = n < 0 ? accountsProblem(body) : groupProblem(n, body);
      if (n < 0) reader.accountReads++;
      else reader.groupReads++;
      if (problem !== null) reader.halves.push(`${request.method} ${request.url} (${response.headers.get("x-snapshot-id")}): ${problem}`);
    } catch (error) {
      reader.failures.push(`${request.method} ${request.url}: ${(error as Error).message}`);
    }
    await Bun.sleep(2);
  }
}

// ---------------------------------------------------------------------------------------------
// The probers: each replica asked directly for the tick row, to time each tick's arrival there

/** What a prober saw of one replica. */
interface Probe {
  port: number;
  /** Tick number → when it was first seen there (Date.now() ms). */
  visibleAt: Map<number, number>;
  /** The highest tick seen. */
  seen: number;
  /** The tick last shown (a replica started again included: it must not show an older one). */
  last: number;
  /** When it was last restarted, and when it first answered after that. */
  restartedAt: number | null;
  backAt: number | null;
  wentBack: string[];
  stopping: boolean;
}

async function probeLoop(probe: Probe): Promise<void> {
  while (!probe.stopping) {
    const r = await getJson(`http://127.0.0.1:${probe.port}/api/users?filter[id]=${TICK_ID}&pageSize=1`);
    const now = Date.now();
    const row = (r?.body?.data as { amount?: number }[] | undefined)?.[0];
    if (r?.status === 200 && typeof row?.amount === "number") {
      const tick = row.amount;
      if (probe.restartedAt !== null && probe.backAt === null) probe.backAt = now;
      if (tick < probe.last) probe.wentBack.push(`tick ${probe.last} then ${tick}`);
      probe.last = tick;
      for (let n = probe.seen + 1; n <= tick; n++) probe.visibleAt.set(n, now);
      probe.seen = Math.max(probe.seen, tick);
    }
    await Bun.sleep(10);
  }
}

// ---------------------------------------------------------------------------------------------
// The export check: a replica's export against the table, row by row

/** The table's rows as the API writes them (values in its formats: datetimes `…T…Z` with ms), JSON lines in key order. */
async function* tableLines(): AsyncGenerator<string> {
  const query = `SELECT json_build_object('id', id, 'name', name, 'email', email, 'status', status, 'role', role, 'age', age,
    'created_at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'grp', grp, 'amount', amount)::text AS r FROM users ORDER BY id`;
  for await (const batch of sql.unsafe(query).cursor(10_000)) {
    for (const row of batch as unknown as { r: string }[]) yield JSON.stringify(JSON.parse(row.r));
  }
}

/** A replica's export, as JSON lines (each parsed and written again). */
async function* exportLines(port: number): AsyncGenerator<string> {
  const response = await fetch(`http://127.0.0.1:${port}/api/users/export?format=ndjson`);
  if (response.status !== 200 || response.body === null) throw new Error(`export from ${port}: ${response.status} ${await response.text()}`);
  const decoder = new TextDecoder();
  let text = "";
  const body = response.body.getReader();
  for (;;) {
    const { done, value } = await body.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    const lines = text.split("\n");
    text = lines.pop() as string;
    for (const line of lines) if (line !== "") yield JSON.stringify(JSON.parse(line));
  }
  if (text.trim() !== "") yield JSON.stringify(JSON.parse(text));
}

/** Compares a replica's export with the table: its row count, or the first difference. */
async function compareExport(port: number): Promise<{ rows: number; difference: string | null }> {
  const want = tableLines();
  const got = exportLines(port);
  for (let row = 0; ; row++) {
    const [w, g] = await Promise.all([want.next(), got.next()]);
    if (w.done && g.done) return { rows: row, difference: null };
    if (w.done || g.done || w.value !== g.value) {
      await Promise.all([want.return(undefined), got.return(undefined)]);
      return { rows: row, difference: `row ${row + 1}: replica ${g.done ? "(end)" : g.value}, PostgreSQL ${w.done ? "(end)" : w.value}` };
    }
  }
}

/**
 * CPU seconds (user + system) used so far by each process of each part of the fleet, from `ps`:
 * this script (s3rver, the stream, the reader and the probers), the publisher, each replica,
 * nginx, wrk, PostgreSQL (every process of the server). A process that has ended is not listed.
 */
function cpuByPart(parts: { publisher: number | null; replicas: number[]; wrk: number | null }): Map<string, Map<number, number>> {
  const ps = Bun.spawnSync(["ps", "-eo", "pid=,ppid=,times=,args="], { stdout: "pipe" }).stdout.toString();
  const rows = ps
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), seconds: Number(m[3]), args: m[4] }));
  const port = new URL(fleet.pg.url).port;
  const postmaster = rows.find((r) => r.args.includes("postgres") && r.args.includes(`-p ${port}`))?.pid;
  const nginxMaster = rows.find((r) => r.args.startsWith("nginx: master") && r.args.includes(dir))?.pid;
  const part = (match: (r: (typeof rows)[number]) => boolean) => new Map(rows.filter(match).map((r) => [r.pid, r.seconds]));
  const out = new Map<string, Map<number, number>>([
    ["script", part((r) => r.pid === process.pid)],
    ["publisher", part((r) => r.pid === parts.publisher)],
    ["postgres", part((r) => r.pid === postmaster || r.ppid === postmaster)],
    ["nginx", part((r) => r.pid === nginxMaster || r.ppid === nginxMaster)],
    ["wrk", part((r) => r.pid === parts.wrk)],
  ]);
  for (const [i, pid] of parts.replicas.entries()) out.set(`replica ${i + 1}`, part((r) => r.pid === pid));
  return out;
}

/** CPU seconds per part between two {@link cpuByPart} readings (a process started in between counts from its start). */
function cpuBetween(before: Map<string, Map<number, number>>, after: Map<string, Map<number, number>>): string {
  return [...after]
    .map(([name, pids]) => {
      let seconds = 0;
      for (const [pid, t] of pids) seconds += t - (before.get(name)?.get(pid) ?? 0);
      return `${name} ${seconds} s`;
    })
    .join(", ");
}

/**
 * The slot's confirmed LSN, its WAL status, the WAL it retains (bytes from its restart LSN to the
 * server's current position) and how far its confirmed LSN is behind that position (bytes).
 */
async function slot(): Promise<{ confirmed: string; walStatus: string; retained: number; behind: number } | null> {
  const [row] = await sql<{ confirmed: string; wal_status: string; retained: string; behind: string }[]>`
    SELECT confirmed_flush_lsn::text AS confirmed, wal_status,
      greatest(0, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn))::text AS retained,
      greatest(0, pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn))::text AS behind
    FROM pg_replication_slots WHERE slot_name = 'users_listing'`;
  return row === undefined ? null : { confirmed: row.confirmed, walStatus: row.wal_status, retained: Number(row.retained), behind: Number(row.behind) };
}

// ---------------------------------------------------------------------------------------------

let failed = false;
let publisher: Subprocess | null = null;
const publisherLogs: string[] = [];
const probes: Probe[] = [];
/** The change event listeners: one on each replica (in the order of `replicas`), then one through nginx. */
const listeners: ReturnType<typeof startListener>[] = [];
/** Snapshot id → LSN, as the manifest named them (a version token without `@` is a snapshot's). */
const snapshots = new Map<string, string>();
let oracle: Oracle | null = null;
let watchingManifest = true;
/** Records each snapshot the manifest names (a compaction publishes a new one), until stopped. */
async function watchManifest(): Promise<void> {
  // the location (S3) tells nobody of a new manifest: it is read again and again, until the run stops watching
  await pollUntil(async () => {
    const m = await fleet.manifest();
    if (m?.current.lsn !== undefined) snapshots.set(m.current.snapshotId, m.current.lsn);
    return !watchingManifest;
  }, 50);
}
/** The latest position a listener has heard a change event of (an LSN's value), or -1. */
const heardUpTo = (listener: (typeof listeners)[number]) => {
  let highest = -1;
  for (const e of listener.events) {
    if (e.event !== "change") continue;
    const lsn = versionLsn(e.version, snapshots);
    if (lsn !== null) highest = Math.max(highest, lsnValue(lsn));
  }
  return highest;
};
let manifestWatch: Promise<void> = Promise.resolve();
let releasePause = () => {};
try {
  await createUsersTable(
    sql,
    rows,
    [
      { name: "grp", type: "bigint", value: "NULL" },
      { name: "amount", type: "bigint", value: "g % 1000" },
    ],
    { statusEnum: true },
  );
  await sql.unsafe(`
    CREATE INDEX users_grp ON users (grp);
    INSERT INTO users VALUES (${TICK_ID}, 'Tick', 'tick@example.org', 'active', 'owner', 30, '2020-01-01T00:00:00.000Z', NULL, 0);
    INSERT INTO users SELECT ${rows} + a, 'Account ' || a, 'account' || a || '@example.org', 'active', 'member', 40, '2020-01-01T00:00:00.000Z', 0, ${ACCOUNT_START} FROM generate_series(1, ${ACCOUNTS}) AS a;`).simple();
  log(`PostgreSQL (wal_level = logical): ${rows} rows, a tick row and ${ACCOUNTS} accounts`);
  await fleet.useLocation(values.location);
  const { location, manifest } = fleet;

  // the publisher: snapshot follow, started again after its kill
  const startPublisher = () => {
    const logFile = join(dir, `publisher-${publisherLogs.length}.log`);
    publisherLogs.push(logFile);
    const child = Bun.spawn(
      [...CLI, "snapshot", "follow", "--from", fleet.pg.url, "--table", "users", "--to", location, "--batch-ms", String(batchMs), "--compact-seconds", String(compactSeconds), "--work-dir", join(dir, "publisher")],
      { cwd: ROOT, env: { ...fleet.env, LOG_LEVEL: "debug" }, stdin: "ignore", stdout: "ignore", stderr: Bun.file(logFile) },
    );
    fleet.track(child);
    return child;
  };
  const followStart = Date.now();
  publisher = startPublisher();
  const first = await waitFor(`a first live snapshot at ${location}`, async () => {
    const m = await manifest();
    return m?.current.lsn === undefined ? null : m;
  }, 250);
  log(`publisher: snapshot follow --batch-ms ${batchMs} --compact-seconds ${compactSeconds}; first snapshot ${first.current.snapshotId} at ${first.current.lsn} (${first.current.rows} rows, ${(first.current.bytes / 2 ** 20).toFixed(1)} MiB) published ${s(Date.now() - followStart)} after its start`);

  // two replicas following it (each applied batch logged: LOG_LEVEL=debug)
  fleet.env = { ...fleet.env, LOG_LEVEL: "debug" };
  const replicaArgs = ["--poll", String(poll)];
  const replicaStart = Date.now();
  fleet.addReplicas([freePort(), freePort()], replicaArgs);
  await Promise.all(replicas.map((r) => waitFor(`replica on ${r.port} ready`, async () => ((await readyId(r.port)) === null ? null : true))));
  log(`replicas on ${replicas.map((r) => r.port).join(", ")} ready (--poll ${poll}): cold start of both ${s(Date.now() - replicaStart)}`);
  const nginxPort = await fleet.startNginx();
  const base = `http://127.0.0.1:${nginxPort}`;
  log(`nginx on ${nginxPort}`);

  // change events: the oracle slot, then a listener on each replica and one through nginx,
  // before any change of the stream (each listener's first state is older than every one)
  oracle = await createOracle(sql, "fleet_oracle", "id", String(TICK_ID), "amount");
  snapshots.set(first.current.snapshotId, first.current.lsn as string);
  manifestWatch = watchManifest();
  for (const r of replicas) listeners.push(startListener(`listener on replica ${r.port}`, `http://127.0.0.1:${r.port}`));
  listeners.push(startListener("listener through nginx", base));
  await waitFor("each listener's version event", async () => (listeners.every((l) => l.events.length > 0) ? true : null), 10);
  log("change events: a listener of GET /api/users/changes on each replica and one through nginx; a test_decoding slot records every commit");

  // the load: the cheap mix (GET and POST) through nginx
  const [counts] = await sql<{ rows: string; inactive: string }[]>`SELECT count(*)::text AS rows, (count(*) FILTER (WHERE status = 'inactive'))::text AS inactive FROM users`;
  const lines = cheapMixOf({ rows: Number(counts.rows), statusCounts: [Number(counts.rows) - Number(counts.inactive), Number(counts.inactive)] }).map(requestLine);
  const slotBefore = await slot();
  const cpuParts = () => ({ publisher: publisher?.pid ?? null, replicas: replicas.map((r) => r.child.pid), wrk: wrk.pid });
  const loadStart = Date.now();
  const { child: wrk, output: wrkOutput } = fleet.startWrk(nginxPort, seconds, lines);
  const cpuBefore = cpuByPart(cpuParts());
  // wrk's own time, read just before it exits (an ended process is not counted)
  let cpuAtEnd: Map<string, Map<number, number>> | null = null;
  const cpuTimer = setTimeout(() => {
    cpuAtEnd = cpuByPart(cpuParts());
  }, seconds * 1000 - 500);
  const loadEnded = wrk.exited.then(() => Date.now());
  log(`wrk: 2 threads, 32 connections, ${seconds} s, the cheap mix (GET and POST) through nginx`);

  // the change stream, the reader and the probers
  const streamDone = runStream();
  log(`change stream: ${rate} row changes/s on one connection (ticks every ${TICK_MS} ms: a group of ${GROUP} rows each)`);
  const readers = [readLoop(base, 0), readLoop(base, 1)];
  for (const r of replicas) probes.push({ port: r.port, visibleAt: new Map(), seen: 0, last: -1, restartedAt: null, backAt: null, wentBack: [], stopping: false });
  const probing = probes.map(probeLoop);

  // the kills: the publisher, then a replica, each started again at once
  const outages: { what: string; from: number; to: number }[] = [];
  let killsInLoad = true;
  if (kills) {
    await Bun.sleep(Math.max(0, loadStart + seconds * 250 - Date.now()));
    const killed = Date.now();
    killsInLoad &&= wrk.exitCode === null;
    (publisher as Subprocess).kill("SIGKILL");
    await (publisher as Subprocess).exited;
    publisher = startPublisher();
    const logFile = publisherLogs.at(-1) as string;
    const resumed = await waitFor("the restarted publisher to resume", async () => logLines(logFile).find((l) => l.msg === "resumed from the published state" || l.msg === "published a snapshot of the table at the slot's consistent point") ?? null, 50);
    const back = Number(resumed.time);
    outages.push({ what: "publisher", from: killed, to: back });
    log(`publisher killed (SIGKILL ${s(killed - loadStart)} into the load, ${stream.committed} changes committed so far) and started again: "${resumed.msg}" ${s(back - killed)} after the kill`);

    await Bun.sleep(Math.max(0, loadStart + seconds * 550 - Date.now()));
    const victim = replicas[0];
    const probe = probes[0];
    const replicaKilled = Date.now();
    killsInLoad &&= wrk.exitCode === null;
    await fleet.restartReplica(victim, replicaArgs);
    // the killed process answers no more: what the prober sees next is the new one's, which
    // must not be older than what the killed one showed
    probe.restartedAt = replicaKilled;
    probe.backAt = null;
    await waitFor(`restarted replica on ${victim.port} ready`, async () => ((await readyId(victim.port)) === null ? null : true), 50);
    const ready = Date.now();
    const answered = await waitFor(`restarted replica on ${victim.port} answering the prober`, async () => probe.backAt, 10);
    outages.push({ what: "replica", from: replicaKilled, to: answered });
    killsInLoad &&= wrk.exitCode === null;
    log(`replica on ${victim.port} killed (SIGKILL ${s(replicaKilled - loadStart)} into the load) and started again: ready after ${s(ready - replicaKilled)} (cold start from ${values.location === "s3" ? "S3" : "the directory"}, the batches after its snapshot applied)`);
  }

  // a listener closed on purpose while the replica applies a few ticks, then connected again with
  // Last-Event-ID: the replica sends what it missed
  const pausedListener = listeners[1];
  let pause: { from: number; to: number } | null = null;
  {
    await Bun.sleep(Math.max(0, loadStart + seconds * 650 - Date.now()));
    const probe = probes[1];
    const gate = new Promise<void>((resolve) => {
      releasePause = resolve;
    });
    const connections = pausedListener.connections;
    const from = Date.now();
    const seenBefore = probe.seen;
    pauseListener(pausedListener, gate);
    await waitFor(`3 ticks on replica ${probe.port} while its listener is away`, async () => (probe.seen >= seenBefore + 3 ? true : null), 10);
    const applied = probe.seen - seenBefore;
    releasePause();
    await waitFor(`the listener on replica ${probe.port} connected again`, async () => (pausedListener.connections > connections ? true : null), 10);
    pause = { from, to: Date.now() };
    log(`listener on replica ${probe.port}: closed ${s(from - loadStart)} into the load while ${applied} ticks were applied there, then connected again with Last-Event-ID`);
  }

  // the burst, 80% into the load: --burst rows updated in transactions of BURST_TRANSACTION
  let burstFigures: { rows: number; transactions: number; committedMs: number; visibleMs: number } | null = null;
  if (burst > 0) {
    await Bun.sleep(Math.max(0, loadStart + seconds * 800 - Date.now()));
    const burstStart = Date.now();
    const statements: Promise<number>[] = [];
    for (let from = 0; from < burst; from += BURST_TRANSACTION) {
      const to = Math.min(burst, from + BURST_TRANSACTION);
      statements.push(burstSql.unsafe(`UPDATE users SET age = CASE WHEN age >= 77 THEN 18 ELSE age + 1 END WHERE id > ${from} AND id <= ${to}`).then((r) => r.count));
    }
    const changed = (await Promise.all(statements)).reduce((a, b) => a + b, 0);
    const committed = Date.now();
    // the first tick sent after the burst's last commit: once both replicas show it, they hold the burst
    const tick = await waitFor("a tick sent after the burst", async () => ticks.find((t) => t.sentAt > committed) ?? null, 10);
    await waitFor(`both replicas showing tick ${tick.n} (after the burst)`, async () => (probes.every((p) => p.visibleAt.has(tick.n)) ? true : null), 10);
    const visible = Math.max(...probes.map((p) => p.visibleAt.get(tick.n) as number));
    outages.push({ what: "burst", from: burstStart, to: visible });
    burstFigures = { rows: changed, transactions: statements.length, committedMs: committed - burstStart, visibleMs: visible - burstStart };
    log(`burst ${s(burstStart - loadStart)} into the load: ${changed} rows updated in ${statements.length} transactions, committed in ${s(committed - burstStart)}, on both replicas ${s(visible - burstStart)} after its start: ${Math.round(changed / ((visible - burstStart) / 1000))} rows/s end to end`);
  }

  // the load's end; the stream stops, a last tick is committed and awaited on both replicas
  await loadEnded;
  stream.stopping = true;
  await streamDone;
  const streamSeconds = (stream.endedAt - stream.startedAt) / 1000;
  log(`change stream: ${stream.committed} row changes in ${stream.transactions} transactions over ${streamSeconds.toFixed(1)} s (${Math.round(stream.committed / streamSeconds)} changes/s), ${ticks.length} ticks, ${stream.errors.length} failed`);
  clearTimeout(cpuTimer);
  log(`CPU seconds during the load (${seconds} s, ${navigator.hardwareConcurrency} cores${kills ? "; the killed publisher's and replica's time not counted" : ""}): ${cpuBetween(cpuBefore, cpuAtEnd ?? cpuByPart(cpuParts()))}`);
  const summary = wrkSummary(await wrkOutput);
  if (summary === null) throw new Error("no wrk summary");
  log(`wrk through nginx: ${summary.requests} requests in ${(summary.duration_us / 1e6).toFixed(1)} s (${summary.rps} req/s), p99 ${(summary.p99_us / 1000).toFixed(1)} ms, non-2xx ${summary.errors_status}, socket errors ${summary.socketErrors}`);
  if (stream.errors.length === 0) {
    // the last tick: the tick row alone (every change before it is then on a replica showing it)
    const lastTick: Tick = { n: ticks.length + 1, sentAt: Date.now(), committedAt: null };
    ticks.push(lastTick);
    await generatorSql.unsafe(`UPDATE users SET amount = ${lastTick.n} WHERE id = ${TICK_ID}`).simple();
    lastTick.committedAt = Date.now();
    await waitFor(`both replicas showing the last tick (${lastTick.n})`, async () => (probes.every((p) => p.seen >= lastTick.n) ? true : null), 10);
    log(`the last tick (${lastTick.n}) on both replicas ${s(Math.max(...probes.map((p) => p.visibleAt.get(lastTick.n) as number)) - lastTick.committedAt)} after its commit`);
  }
  // change events: every transaction the oracle saw, announced to every listener
  const transactions: CommittedTransaction[] = await (oracle as Oracle).read();
  if (stream.errors.length === 0 && transactions.length > 0) {
    const lastEnd = lsnValue((transactions.at(-1) as CommittedTransaction).end);
    await waitFor(`every listener hearing of the last commit (${(transactions.at(-1) as CommittedTransaction).end})`, async () => (listeners.every((l) => heardUpTo(l) >= lastEnd) ? true : null), 10);
  }
  watchingManifest = false;
  await manifestWatch;
  await Promise.all(listeners.map(stopListener));
  const announcements: Announcement[] = listeners.map((l) => checkAnnounced(l, transactions, snapshots));
  for (const [i, l] of listeners.entries()) {
    const a = announcements[i];
    log(`${l.label}: ${l.connections} streams opened (${l.resumedHeld} reconnects sent the events missed, ${l.resumedRefresh} a refresh), ${l.events.length} events; of ${a.transactions} transactions, ${a.byKeys} announced by their keys, ${a.byRefresh} by a refresh, ${a.problemCount} not`);
  }
  reader.stopping = true;
  for (const p of probes) p.stopping = true;
  await Promise.all([...readers, ...probing]);
  log(`reader through nginx: ${reader.groupReads + reader.accountReads} reads (${reader.groupReads} of a group, GET and POST: ${reader.whole} whole, ${reader.none} none, ${reader.movedSeen} of a moved group; ${reader.accountReads} of the accounts), ${reader.failures.length} failed, ${reader.halves.length} saw half a transaction`);

  // freshness: commit → visible on both replicas, per tick
  const samples = ticks
    .filter((t) => t.committedAt !== null && probes.every((p) => p.visibleAt.has(t.n)))
    .map((t) => {
      const each = probes.map((p) => Math.max(0, (p.visibleAt.get(t.n) as number) - (t.committedAt as number)));
      const visible = (t.committedAt as number) + Math.max(...each);
      const crossed = outages.some((o) => (t.committedAt as number) <= o.to && visible >= o.from);
      return { both: Math.max(...each), each, crossed };
    });
  const describe = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `p50 ${ms(quantile(sorted, 0.5))}, p99 ${ms(quantile(sorted, 0.99))}, max ${ms(sorted.at(-1) ?? Number.NaN)} over ${sorted.length} ticks`;
  };
  const steady = samples.filter((x) => !x.crossed);
  log(`freshness, commit → visible on both replicas: ${describe(steady.map((x) => x.both))}${outages.length > 0 ? ` outside the ${outages.map((o) => o.what).join(", ")}` : ""}`);
  if (outages.length > 0) log(`  all ticks, the ${outages.map((o) => o.what).join(", ")} included: ${describe(samples.map((x) => x.both))}`);
  for (const [i, p] of probes.entries()) log(`  replica on ${p.port} alone: ${describe(steady.map((x) => x.each[i]))}`);

  // commit → the change event announcing it, at the listener on each replica, per tick
  const tickIndex = new Map<number, number>();
  for (const [i, t] of transactions.entries()) if (t.tick !== null) tickIndex.set(t.tick, i);
  const eventOutages = pause === null ? outages : [...outages, { what: "listener's pause", ...pause }];
  const heardSamples = ticks
    .filter((t) => t.committedAt !== null && tickIndex.has(t.n) && replicas.every((_, r) => announcements[r].heardAt[tickIndex.get(t.n) as number] != null))
    .map((t) => {
      const each = replicas.map((_, r) => Math.max(0, (announcements[r].heardAt[tickIndex.get(t.n) as number] as number) - (t.committedAt as number)));
      const heard = (t.committedAt as number) + Math.max(...each);
      const crossed = eventOutages.some((o) => (t.committedAt as number) <= o.to && heard >= o.from);
      return { both: Math.max(...each), each, crossed };
    });
  const heardSteady = heardSamples.filter((x) => !x.crossed);
  log(`commit → change event at the listener on each replica: ${describe(heardSteady.map((x) => x.both))} outside the ${eventOutages.map((o) => o.what).join(", ") || "(none)"}`);
  log(`  all ticks: ${describe(heardSamples.map((x) => x.both))}`);
  for (const [i, r] of replicas.entries()) log(`  listener on replica ${r.port} alone: ${describe(heardSteady.map((x) => x.each[i]))}`);

  // each replica's applied batches (from their logs: every start of each)
  const applyRates = replicas.map((r) => {
    const applied = r.logs.flatMap(logLines).filter((l) => l.msg === "applied a change batch");
    const changes = applied.reduce((a, l) => a + Number(l.changes), 0);
    const ms = applied.reduce((a, l) => a + Number(l.ms), 0);
    const biggest = applied.reduce((a, l) => (Number(l.changes) > Number(a?.changes ?? -1) ? l : a), applied[0]);
    return { port: r.port, batches: applied.length, changes, ms, rate: ms > 0 ? Math.round(changes / (ms / 1000)) : 0, biggest: biggest === undefined ? "none" : `${biggest.changes} changes in ${biggest.ms} ms` };
  });
  for (const a of applyRates) log(`replica on ${a.port}: ${a.batches} batches applied, ${a.changes} changes in ${Math.round(a.ms)} ms of applying: ${a.rate} changes/s (the largest batch: ${a.biggest})`);

  // the publisher's batches and compactions
  const published = publisherLogs.flatMap(logLines);
  const batches = published.filter((l) => l.msg === "published a batch");
  const compacted = published.filter((l) => l.msg === "compacted the changes into a new snapshot");
  const at = (time: unknown) => s(Number(time) - loadStart);
  log(`publisher: ${batches.length} batches (${batches.length === 0 ? 0 : Math.round(batches.reduce((a, l) => a + Number(l.changes), 0) / batches.length)} changes each on average), ${compacted.length} compactions${compacted.length === 0 ? "" : ` (published ${compacted.map((l) => at(l.time)).join(", ")} into the load)`}`);
  for (const r of replicas) {
    const reloads = r.logs.flatMap(logLines).filter((l) => l.msg === "snapshot reloaded");
    if (reloads.length > 0) log(`replica on ${r.port}: new snapshots swapped in at ${reloads.map((l) => `${at(l.time)} (the swap with its batches ${l.swapMs} ms)`).join(", ")} into the load`);
  }
  const slotAfter = await slot();
  log(`slot users_listing: confirmed ${slotBefore?.confirmed} at the load's start, ${slotAfter?.confirmed} at the end, ${slotAfter?.behind} bytes behind the server's position (wal_status ${slotAfter?.walStatus}, ${slotAfter?.retained} bytes of WAL retained)`);

  // every replica's export against the table
  const exports = [];
  for (const r of replicas) {
    const compared = await compareExport(r.port);
    exports.push(compared);
    log(`export of the replica on ${r.port}: ${compared.difference === null ? `${compared.rows} rows, equal to PostgreSQL's` : `DIFFERS from PostgreSQL at ${compared.difference}`}`);
  }

  // SIGTERM: the publisher publishes what it holds and exits 0
  (publisher as Subprocess).kill("SIGTERM");
  const code = await (publisher as Subprocess).exited;

  const problems: string[] = [];
  if (summary.errors_status !== 0) problems.push(`${summary.errors_status} non-2xx answers`);
  if (summary.socketErrors !== 0) problems.push(`${summary.socketErrors} socket errors`);
  if (stream.errors.length > 0) problems.push(`the change stream failed: ${stream.errors[0]}`);
  if (reader.failures.length > 0) problems.push(`${reader.failures.length} reader requests failed: ${reader.failures.slice(0, 3).join("; ")}`);
  if (reader.halves.length > 0) problems.push(`${reader.halves.length} reads saw half a transaction: ${reader.halves.slice(0, 3).join("; ")}`);
  if (reader.whole === 0 || reader.none === 0 || reader.movedSeen === 0) problems.push(`the reader did not see groups absent, whole and moved (${reader.none}, ${reader.whole}, ${reader.movedSeen}): it checked nothing in flight`);
  for (const p of probes) if (p.wentBack.length > 0) problems.push(`the replica on ${p.port} went back: ${p.wentBack.slice(0, 3).join("; ")}`);
  if (kills && !killsInLoad) problems.push(`a kill came after the load ended (${seconds} s): raise --seconds`);
  for (const [i, e] of exports.entries()) if (e.difference !== null) problems.push(`the replica on ${replicas[i].port} differs from PostgreSQL at ${e.difference}`);
  if (slotBefore === null || slotAfter === null || slotAfter.confirmed === slotBefore.confirmed) problems.push(`the slot's confirmed LSN did not advance (${slotBefore?.confirmed} → ${slotAfter?.confirmed})`);
  if (code !== 0) problems.push(`the publisher exited ${code} on SIGTERM`);
  if (burst > 0 && burstFigures === null) problems.push("the burst did not run");
  if (transactions.length === 0) problems.push("the oracle slot saw no transaction: nothing was checked for change events");
  for (const a of announcements) if (a.problemCount > 0) problems.push(`${a.problemCount} transactions not announced: ${a.problems.join("; ")}`);
  for (const l of listeners) if (l.malformed.length > 0) problems.push(`${l.label} read ${l.malformed.length} malformed events: ${l.malformed.slice(0, 2).join("; ")}`);
  if (kills && listeners[0].connections < 2) problems.push(`the listener on the killed replica did not connect again (${listeners[0].connections} streams)`);
  if (pausedListener.resumedHeld < 1) problems.push(`the listener closed on purpose was not sent the events it missed on its reconnect (${pausedListener.resumedRefresh} refreshes instead)`);
  if (announcements.every((a) => a.problemCount === 0) && transactions.length > 0) log(`change events: every committed transaction (${transactions.length}) announced to each of ${listeners.length} listeners`);
  log(
    `figures (load average ${loadAverage()}): rows ${rows}, location ${values.location}, poll ${poll} s, batch ${batchMs} ms, compaction every ${compactSeconds} s, kills ${values.kills}; ${summary.requests} requests, ${summary.rps} req/s, non-2xx ${summary.errors_status}, socket errors ${summary.socketErrors}; ${Math.round(stream.committed / streamSeconds)} changes/s; freshness ${describe(steady.map((x) => x.both))}` +
      (burstFigures === null ? "" : `; burst ${burstFigures.rows} rows on both replicas in ${s(burstFigures.visibleMs)} (${Math.round(burstFigures.rows / (burstFigures.visibleMs / 1000))} rows/s)`) +
      `; apply ${applyRates.map((a) => `${a.rate} changes/s`).join(" and ")}` +
      `; commit → event on each replica ${describe(heardSteady.map((x) => x.both))}`,
  );
  log(problems.length === 0 ? "PASS" : `FAIL: ${problems.join("; ")}`);
  failed = problems.length > 0;
} catch (error) {
  log(`FAIL: ${(error as Error).stack ?? (error as Error).message}`);
  if (stream.errors.length > 0) log(`the change stream failed: ${stream.errors.join("; ")}`);
  for (const file of [...publisherLogs, ...replicas.flatMap((r) => r.logs)]) {
    const lines = tail(file, 8);
    if (lines !== "") console.log(`--- ${file}\n${lines}`);
  }
  failed = true;
} finally {
  releasePause();
  watchingManifest = false;
  for (const l of listeners) {
    l.stopping = true;
    l.abort();
  }
  stream.stopping = true;
  reader.stopping = true;
  for (const p of probes) p.stopping = true;
  await generatorSql.end({ timeout: 5 }).catch(() => {});
  await burstSql.end({ timeout: 5 }).catch(() => {});
  await fleet.cleanup();
}
process.exit(failed ? 1 : 0);
