/**
 * The fleet test (docs/operations.md), bounded and on loopback: PostgreSQL (Debian's, in a
 * temporary directory) → `snapshot build --from` → `snapshot publish` to a shared directory →
 * two replicas `serve --source … --poll 2` behind nginx (deploy/nginx.conf, ports rewritten) →
 * wrk with GET and POST requests through nginx for `--seconds`. Meanwhile rows change in
 * PostgreSQL and a new snapshot is built and published, then one replica is killed with SIGKILL
 * and started again. Passes when wrk saw no non-2xx answer and no socket error, both replicas
 * serve the new version, and the restarted one came back with it.
 *
 *   bun scripts/fleet-test.ts [--rows 200000] [--seconds 30]
 *
 * Needs PostgreSQL (`sh scripts/install-postgres.sh`), nginx and wrk (Debian packages:
 * `apt-get install -y nginx wrk`). Prints the figures: freshness (commit → every replica
 * serving it), the restarted replica's cold start, requests/s.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startPostgres } from "../test/support/postgres.ts";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({ options: { rows: { type: "string", default: "200000" }, seconds: { type: "string", default: "30" } } });
const rows = Number(values.rows);
const seconds = Number(values.seconds);
const dir = mkdtempSync(join(tmpdir(), "users-fleet-"));
const shared = join(dir, "shared");
const cli = [process.execPath, join(ROOT, "src", "cli.ts")];
const log = (line: string) => console.log(`[fleet ${((performance.now() - t0) / 1000).toFixed(1)}s] ${line}`);
const t0 = performance.now();

/** Runs the CLI to the end; throws with its stderr when it fails. */
function run(args: string[]): string {
  const r = Bun.spawnSync([...cli, ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stderr.toString();
}

/** A free port on loopback. */
function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** The snapshot id a replica serves (its /healthz), or null when it does not answer. */
async function servedId(port: number): Promise<string | null> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/healthz`);
    return ((await r.json()) as { snapshotId: string }).snapshotId;
  } catch {
    return null;
  }
}

/** The manifest's current snapshot id. */
function publishedId(): string {
  return JSON.parse(readFileSync(join(shared, "manifest.json"), "utf8")).current.snapshotId;
}

const pg = startPostgres();
const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
const replicas: { port: number; child: ReturnType<typeof Bun.spawn> }[] = [];
let nginxPrefix = "";
let failed = false;
try {
  await sql.unsafe(`
    CREATE TYPE role AS ENUM ('owner', 'admin', 'member', 'viewer');
    CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL, email text NOT NULL, status text NOT NULL, role role, age int, created_at timestamptz);
    INSERT INTO users SELECT g, 'User ' || g, 'user' || g || '@example.com', CASE WHEN g % 3 = 0 THEN 'inactive' ELSE 'active' END,
      (ARRAY['owner','admin','member','viewer'])[1 + g % 4]::role, 18 + g % 60, timestamptz '2020-01-01' + g * interval '1 minute'
    FROM generate_series(1, ${rows}) AS g;`).simple();
  log(`PostgreSQL: ${rows} rows`);
  const snap = join(dir, "users.snap");
  run(["snapshot", "build", "--from", pg.url, "--table", "users", "-o", snap]);
  run(["snapshot", "publish", snap, "--to", shared]);
  log(`built and published ${publishedId()}`);

  const start = (port: number) => {
    const child = Bun.spawn([...cli, "serve", "--source", shared, "--poll", "2", "--port", String(port), "--cache-dir", join(dir, `replica-${port}`), "--no-demo"], {
      cwd: ROOT,
      stdout: "ignore",
      stderr: "ignore",
    });
    return child;
  };
  const waitServing = async (port: number, id: string, timeoutMs: number): Promise<number> => {
    const started = performance.now();
    while (performance.now() - started < timeoutMs) {
      if ((await servedId(port)) === id) return performance.now() - started;
      await Bun.sleep(100);
    }
    throw new Error(`replica on ${port} does not serve ${id} after ${timeoutMs} ms (serves ${await servedId(port)})`);
  };
  for (const port of [freePort(), freePort()]) replicas.push({ port, child: start(port) });
  for (const r of replicas) await waitServing(r.port, publishedId(), 60_000);
  log(`replicas on ${replicas.map((r) => r.port).join(", ")} serving`);

  // nginx over the two replicas, from deploy/nginx.conf
  nginxPrefix = join(dir, "nginx");
  mkdirSync(join(nginxPrefix, "logs"), { recursive: true });
  const nginxPort = freePort();
  const conf = readFileSync(join(ROOT, "deploy", "nginx.conf"), "utf8")
    .replace("server 127.0.0.1:3001", `server 127.0.0.1:${replicas[0].port}`)
    .replace("server 127.0.0.1:3002", `server 127.0.0.1:${replicas[1].port}`)
    .replace("listen 8080;", `listen 127.0.0.1:${nginxPort};`);
  writeFileSync(join(nginxPrefix, "nginx.conf"), conf);
  const nginx = Bun.spawnSync(["nginx", "-c", join(nginxPrefix, "nginx.conf"), "-p", `${nginxPrefix}/`], { stderr: "pipe" });
  if (nginx.exitCode !== 0) throw new Error(`nginx: ${nginx.stderr.toString()}`);
  log(`nginx on ${nginxPort}`);

  // wrk: GET and POST through nginx
  const list = join(dir, "requests.tsv");
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) {
    lines.push(`GET\t/api/users?page=${1 + (i % 50)}&pageSize=20&sortBy=name&filter[status]=${i % 2 === 0 ? "active" : "inactive"}`);
    lines.push(`POST\t/api/users\t${JSON.stringify({ startRow: (i % 100) * 100, endRow: (i % 100) * 100 + 100, sortModel: [{ colId: "age", sort: "desc" }], filterModel: { role: { filterType: "set", values: ["admin"] } } })}`);
  }
  writeFileSync(list, `${lines.join("\n")}\n`);
  const wrk = Bun.spawn(["wrk", "-t2", "-c32", `-d${seconds}s`, "--timeout", "10s", "-s", join(ROOT, "bench", "wrk", "mix.lua"), `http://127.0.0.1:${nginxPort}`, "--", list], { stdout: "pipe", stderr: "pipe" });

  // a change in PostgreSQL, built and published while the load runs
  await Bun.sleep(Math.min(5, seconds / 6) * 1000);
  const before = publishedId();
  const committed = performance.now();
  await sql.unsafe(`UPDATE users SET name = name || ' (renamed)' WHERE id % 1000 = 0; INSERT INTO users VALUES (${rows + 1}, 'Newcomer', 'new@example.com', 'active', 'viewer', 30, date_trunc('milliseconds', now()));`).simple();
  run(["snapshot", "build", "--from", pg.url, "--table", "users", "-o", snap]);
  run(["snapshot", "publish", snap, "--to", shared]);
  const next = publishedId();
  if (next === before) throw new Error("the new build has the old snapshot id");
  await Promise.all(replicas.map((r) => waitServing(r.port, next, 60_000)));
  const freshness = performance.now() - committed;
  log(`change committed → both replicas serving ${next}: ${(freshness / 1000).toFixed(1)} s`);

  // one replica killed and started again
  const victim = replicas[0];
  victim.child.kill("SIGKILL");
  await victim.child.exited;
  const restarted = performance.now();
  victim.child = start(victim.port);
  const coldStart = (await waitServing(victim.port, next, 60_000)) + (performance.now() - restarted - 0);
  log(`replica on ${victim.port} killed (SIGKILL) and started again: serving ${next} after ${((performance.now() - restarted) / 1000).toFixed(1)} s`);
  void coldStart;

  const output = await new Response(wrk.stdout).text();
  await wrk.exited;
  const summary = JSON.parse(/WRKJSON (\{.*\})/.exec(output)?.[1] ?? "{}") as Record<string, number>;
  const errors = summary.errors_connect + summary.errors_read + summary.errors_write + summary.errors_timeout;
  log(`wrk through nginx: ${summary.requests} requests in ${(summary.duration_us / 1e6).toFixed(1)} s (${Math.round(summary.requests / (summary.duration_us / 1e6))} req/s), p99 ${(summary.p99_us / 1000).toFixed(1)} ms, non-2xx ${summary.errors_status}, socket errors ${errors}`);
  const ids = await Promise.all(replicas.map((r) => servedId(r.port)));
  const pass = summary.errors_status === 0 && errors === 0 && ids.every((id) => id === next);
  log(pass ? "PASS" : `FAIL: replicas serve ${ids.join(", ")}, expected ${next}`);
  failed = !pass;
} catch (error) {
  log(`FAIL: ${(error as Error).message}`);
  failed = true;
} finally {
  if (nginxPrefix !== "") Bun.spawnSync(["nginx", "-s", "stop", "-c", join(nginxPrefix, "nginx.conf"), "-p", `${nginxPrefix}/`]);
  for (const r of replicas) r.child.kill("SIGKILL");
  await sql.end({ timeout: 5 });
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
