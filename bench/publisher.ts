/**
 * Question: does the publisher (`snapshot follow`) keep up with a given rate of row changes?
 *
 * A throwaway PostgreSQL with `wal_level = logical` (test/support/postgres.ts) holding the
 * fleet's `users` table of `--rows` rows (scripts/fleet-harness.ts `createUsersTable`); the
 * publisher, the CLI of this tree (and, with `--baseline DIR`, of another checkout, in turn
 * on the same server: one sitting), publishing to a directory; then a writer like pgbench's at a
 * fixed rate: `--rate` row changes a second for `--seconds`, in transactions of `--tx-rows` rows
 * (one statement each: 80% updates of random rows, 10% inserts of new rows, 10% deletes of rows
 * it inserted) over `--connections` connections, paced against the clock. Each second it reads
 * how far the slot's confirmed position is behind the WAL's end (`pg_current_wal_lsn() -
 * confirmed_flush_lsn`, the WAL PostgreSQL keeps for the publisher: "bytes behind").
 *
 * Reported per tree: the rate the writer achieved, bytes behind (p50, max during the load, at
 * the load's end), the time from the last commit until the publisher has confirmed everything
 * (bytes behind 0), the batches and changes published, and the publisher's CPU per 1,000 changes.
 * It keeps up when bytes behind stays bounded during the load and reaches 0 within about one
 * `--batch-ms` after it.
 *
 *   flock /tmp/bench.lock bun bench/publisher.ts [--rows 1m] [--rate 10000] [--seconds 60]
 *     [--tx-rows 10] [--connections 4] [--batch-ms 500] [--compact-seconds 600] [--baseline DIR]
 *     [--cpu-prof DIR]   (this tree's publisher writes a CPU profile, in markdown, into DIR)
 *
 * Prints one line per second and a summary per tree; nothing is written to bench/results.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import postgres from "postgres";
import { readManifest } from "../src/publish/publish.ts";
import { openStorage } from "../src/io/storage.ts";
import { createUsersTable } from "../scripts/fleet-harness.ts";
import { startPostgres } from "../test/support/postgres.ts";
import { parseSize, sizeLabel } from "./datasets.ts";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1m" },
    rate: { type: "string", default: "10000" },
    seconds: { type: "string", default: "60" },
    "tx-rows": { type: "string", default: "10" },
    connections: { type: "string", default: "4" },
    "batch-ms": { type: "string", default: "500" },
    "compact-seconds": { type: "string", default: "600" },
    baseline: { type: "string" },
    "cpu-prof": { type: "string" },
  },
});
const rows = parseSize(values.rows as string);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const txRows = Number(values["tx-rows"]);
const connections = Number(values.connections);
for (const [name, value] of Object.entries({ rate, seconds, "tx-rows": txRows, connections })) {
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name}: a positive integer (got ${value})`);
}
const say = (line: string) => console.log(`[publisher] ${line}`);

/** User and system CPU of a process so far, in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** The `n`-th smallest fraction `q` of `values`. */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

const pg = startPostgres({ logical: true });
const sql = postgres(pg.url, { max: connections + 1, onnotice: () => {} });
const dir = mkdtempSync(join(tmpdir(), "users-bench-publisher-"));
let publisher: Subprocess | null = null;
try {
  let t = performance.now();
  await createUsersTable(sql, rows);
  await sql.unsafe("VACUUM ANALYZE users");
  say(`PostgreSQL: users table of ${sizeLabel(rows)} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  /** The next id an insert takes, and the ids inserted and not deleted yet (what deletes take). */
  let nextId = rows + 1;
  const inserted: number[] = [];

  const trees = [{ name: "this tree", root: ROOT }];
  if (values.baseline !== undefined) trees.push({ name: `baseline ${values.baseline}`, root: resolve(values.baseline) });
  const summaries: string[] = [];
  for (const [index, tree] of trees.entries()) {
    const slot = `bench_slot_${index}`;
    const location = join(dir, `published-${index}`);
    const logFile = join(dir, `publisher-${index}.log`);
    t = performance.now();
    // --cpu-prof DIR: this tree's publisher writes a CPU profile there (markdown) when it exits
    const profile = index === 0 && values["cpu-prof"] !== undefined ? ["--cpu-prof-md", `--cpu-prof-dir=${resolve(values["cpu-prof"])}`] : [];
    publisher = Bun.spawn(
      [process.execPath, ...profile, join(tree.root, "src", "cli.ts"), "snapshot", "follow", "--from", pg.url, "--table", "users", "--to", location, "--slot", slot, "--publication", `bench_pub_${index}`,
        "--batch-ms", String(values["batch-ms"]), "--compact-seconds", String(values["compact-seconds"]), "--work-dir", join(dir, `work-${index}`)],
      { cwd: tree.root, env: { ...process.env, LOG_LEVEL: "info" }, stdin: "ignore", stdout: "ignore", stderr: Bun.file(logFile) },
    );
    for (;;) {
      if ((await readManifest(openStorage(location)).catch(() => null))?.current.lsn !== undefined) break;
      if (publisher.exitCode !== null) throw new Error(`${tree.name}: the publisher exited ${publisher.exitCode}: ${readFileSync(logFile, "utf8").slice(-2000)}`);
      await Bun.sleep(200);
    }
    say(`${tree.name}: first snapshot published ${((performance.now() - t) / 1000).toFixed(1)} s after the publisher's start`);

    const behind = async (): Promise<number> => {
      const [row] = await sql<{ behind: string | null }[]>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::text AS behind FROM pg_replication_slots WHERE slot_name = ${slot}`;
      return Number(row?.behind ?? Number.NaN);
    };
    // the writer: transactions paced against the clock, over `connections` connections
    const stats = { sent: 0, changed: 0, transactions: 0, errors: 0, kinds: { insert: 0, delete: 0, update: 0 } };
    const started = Date.now();
    const until = started + seconds * 1000;
    const transaction = async (): Promise<number> => {
      const draw = Math.random();
      if (draw < 0.1) {
        const ids = Array.from({ length: txRows }, () => nextId++);
        const count = (await sql`INSERT INTO users (id, name, email, status, role, age, created_at) SELECT g, 'New ' || g, 'new' || g || '@example.com', 'active', 'member', 30, date_trunc('milliseconds', now()) FROM unnest(${ids}::bigint[]) AS g`).count;
        // committed: a delete may take them now
        inserted.push(...ids);
        stats.kinds.insert += count;
        return count;
      }
      if (draw < 0.2 && inserted.length >= txRows) {
        const ids = inserted.splice(0, txRows);
        const count = (await sql`DELETE FROM users WHERE id = ANY(${ids}::bigint[])`).count;
        stats.kinds.delete += count;
        return count;
      }
      const ids = Array.from({ length: txRows }, () => 1 + Math.floor(Math.random() * rows));
      const count = (await sql`UPDATE users SET age = CASE WHEN age >= 77 THEN 18 ELSE age + 1 END, name = 'Changed ' || id WHERE id = ANY(${ids}::bigint[])`).count;
      stats.kinds.update += count;
      return count;
    };
    const writer = async () => {
      for (;;) {
        const now = Date.now();
        if (now >= until) return;
        const due = (rate * (now - started)) / 1000;
        if (stats.sent >= due) {
          await Bun.sleep(Math.max(1, ((stats.sent + txRows - due) / rate) * 1000));
          continue;
        }
        stats.sent += txRows;
        try {
          const count = await transaction();
          stats.changed += count;
          stats.transactions++;
        } catch {
          stats.errors++;
        }
      }
    };
    const walAt = async (): Promise<string> => (await sql<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`)[0].lsn;
    const walBefore = await walAt();
    const cpuBefore = cpuMs(publisher.pid);
    const samples: number[] = [];
    const sampler = (async () => {
      for (let second = 1; Date.now() < until; second++) {
        await Bun.sleep(Math.max(0, started + second * 1000 - Date.now()));
        const b = await behind();
        samples.push(b);
        say(`${tree.name} ${second} s: ${stats.changed} rows changed (${Math.round(stats.changed / ((Date.now() - started) / 1000))}/s), ${mib(b)} behind`);
      }
    })();
    await Promise.all(Array.from({ length: connections }, writer));
    const loadEnd = Date.now();
    const [{ wal }] = await sql<{ wal: string }[]>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${walBefore}::pg_lsn)::text AS wal`;
    const walPerSecond = Number(wal) / ((loadEnd - started) / 1000);
    await sampler;
    const atEnd = await behind();
    // everything confirmed: bytes behind 0 (a keepalive's position once the last batch is published)
    let caughtUp = Number.NaN;
    for (;;) {
      if ((await behind()) === 0) {
        caughtUp = Date.now() - loadEnd;
        break;
      }
      if (Date.now() - loadEnd > 600_000) break;
      await Bun.sleep(20);
    }
    const cpu = cpuMs(publisher.pid) - cpuBefore;
    const manifest = await readManifest(openStorage(location));
    const batches = manifest?.changes ?? [];
    const published = batches.reduce((n, b) => n + b.changes, 0);
    const achieved = Math.round(stats.changed / ((loadEnd - started) / 1000));
    const line = `${tree.name}: ${stats.changed} rows changed in ${stats.transactions} transactions over ${((loadEnd - started) / 1000).toFixed(1)} s (${achieved}/s of ${rate}/s asked: ${stats.kinds.update} updated, ${stats.kinds.insert} inserted, ${stats.kinds.delete} deleted; ${stats.errors} failed); WAL ${mib(walPerSecond)}/s; bytes behind during the load p50 ${mib(quantile(samples, 0.5))} (${(quantile(samples, 0.5) / walPerSecond).toFixed(2)} s of WAL), max ${mib(Math.max(...samples))} (${(Math.max(...samples) / walPerSecond).toFixed(2)} s), at its end ${mib(atEnd)}; 0 behind ${Number.isNaN(caughtUp) ? "never (10 min)" : `${caughtUp} ms`} after the last commit; ${batches.length} batches listed holding ${published} changes; publisher CPU ${(cpu / 1000).toFixed(1)} s (${((cpu / Math.max(1, published)) * 1000).toFixed(0)} ms per 1,000 changes)`;
    say(line);
    summaries.push(line);
    const notes = readFileSync(logFile, "utf8").split("\n").filter((l) => l.includes('"level":40') || l.includes('"level":50') || l.includes("new snapshot"));
    if (notes.length > 0) say(`${tree.name}: the publisher's warnings:\n${notes.slice(0, 10).join("\n")}`);
    publisher.kill("SIGTERM");
    await publisher.exited;
    publisher = null;
    await sql`SELECT pg_drop_replication_slot(${slot})`;
  }
  const [{ load }] = [{ load: readFileSync("/proc/loadavg", "utf8").trim() }];
  say(`summary (${sizeLabel(rows)} rows, --rate ${rate}, --tx-rows ${txRows}, --connections ${connections}, --batch-ms ${values["batch-ms"]}; load average ${load}):`);
  for (const line of summaries) console.log(`  ${line}`);
} finally {
  publisher?.kill("SIGKILL");
  await sql.end({ timeout: 1 });
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
