/**
 * The machinery the fleet tests share (docs/operations.md "The fleet test"): scripts/fleet-test.ts
 * (a snapshot rebuilt on a schedule) and scripts/fleet-live.ts (a live table, `snapshot follow`)
 * run the same fleet on loopback, in a temporary directory; a wait ends on what it waits for,
 * never on a time limit (a hang is ended by the caller: the test's timeout, or SIGINT/SIGTERM):
 *
 * - PostgreSQL (Debian's, test/support/postgres.ts), optionally with `wal_level = logical`;
 * - the location: a bucket on s3rver (an S3-compatible server from npm, in this process) or a
 *   shared directory, and the environment every child needs to reach it;
 * - replicas `serve --source <location> --poll S`, each with a log file of its own per start;
 * - nginx over two replicas (deploy/nginx.conf, ports rewritten);
 * - wrk replaying a request list (bench/wrk/mix.lua) through nginx, its summary parsed;
 * - one cleanup that stops all of it (each child once, process groups included) and removes
 *   the directory, also on SIGINT and SIGTERM.
 *
 * s3rver answers from this process's event loop, so nothing here blocks it once it runs:
 * children are started with Bun.spawn and awaited.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import postgres from "postgres";
import { type Manifest, readManifest } from "../src/publish/publish.ts";
import { openStorage } from "../src/io/storage.ts";
import { pollUntil } from "../test/support/poll.ts";
import { whenEnded } from "../test/support/processes.ts";
import { type TestPostgres, startPostgres } from "../test/support/postgres.ts";
import { type TestS3, startS3 } from "../test/support/s3.ts";

/** The project root (every child's working directory). */
export const ROOT = resolve(import.meta.dir, "..");
/** The command line of the service's CLI from source: `bun src/cli.ts`. */
export const CLI = [process.execPath, join(ROOT, "src", "cli.ts")];
/** nginx's binary: on the PATH, or where Debian puts it (/usr/sbin, which a non-root PATH may lack). */
export const NGINX = Bun.which("nginx") ?? "/usr/sbin/nginx";

/** A log line writer: `[<name> <seconds since its creation>s] line` on stdout. */
export type Log = (line: string) => void;

/** A {@link Log} for a run named `name`. */
export function createLog(name: string): Log {
  const t0 = performance.now();
  return (line: string) => console.log(`[${name} ${((performance.now() - t0) / 1000).toFixed(1)}s] ${line}`);
}

/** Milliseconds as seconds with one decimal: `12.3 s`. */
export const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A free port on loopback. */
export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** GET on loopback: the status and the parsed JSON body (null when not JSON), or null when it fails (refused, reset). */
export async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> | null } | null> {
  try {
    const response = await fetch(url);
    const text = await response.text();
    let body: Record<string, unknown> | null = null;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {}
    return { status: response.status, body };
  } catch {
    return null;
  }
}

/** The snapshot id a replica serves (its /healthz 200), or null while it does not serve. */
export async function servedId(port: number): Promise<string | null> {
  const r = await getJson(`http://127.0.0.1:${port}/healthz`);
  return r?.status === 200 && typeof r.body?.snapshotId === "string" ? r.body.snapshotId : null;
}

/** The snapshot id a replica is ready with (its /readyz 200), or null while it is not ready. */
export async function readyId(port: number): Promise<string | null> {
  const r = await getJson(`http://127.0.0.1:${port}/readyz`);
  return r?.status === 200 && typeof r.body?.snapshotId === "string" ? r.body.snapshotId : null;
}

/** What the run waits for now ({@link waitFor}): told on SIGINT and SIGTERM, so that a run stopped while it hangs says on what. */
const waiting = new Set<string>();

/**
 * Polls `check` every `everyMs` until it returns a value other than null (test/support/poll.ts:
 * a replica's readiness, a remote manifest, PostgreSQL's activity announce themselves to no one),
 * with no time limit: a run that never gets there is stopped by its caller.
 * @param what the condition in words, for the log of a run stopped while it waits
 */
export async function waitFor<T>(what: string, check: () => Promise<T | null>, everyMs = 100): Promise<T> {
  waiting.add(what);
  try {
    return await pollUntil(check, everyMs);
  } finally {
    waiting.delete(what);
  }
}

/** Runs a command to its end without blocking the event loop; throws with its stderr when it fails. */
export async function runAsync(command: string[]): Promise<void> {
  const child = Bun.spawn(command, { stdout: "ignore", stderr: "pipe" });
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  if (code !== 0) throw new Error(`${command.join(" ")} exited ${code}: ${stderr}`);
}

/** The last `n` lines of a file ("" when it does not exist). */
export function tail(file: string, n: number): string {
  if (!existsSync(file)) return "";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-n).join("\n");
}

/** wrk's summary as bench/wrk/mix.lua prints it (`WRKJSON {…}`), with its socket errors summed and its rate. */
export interface WrkSummary {
  requests: number;
  duration_us: number;
  errors_connect: number;
  errors_read: number;
  errors_write: number;
  /** Answers other than 2xx/3xx. */
  errors_status: number;
  errors_timeout: number;
  p50_us: number;
  p99_us: number;
  max_us: number;
  /** connect + read + write + timeout errors. */
  socketErrors: number;
  /** requests / duration, per second. */
  rps: number;
}

/** The summary in wrk's output, or null when there is none (wrk failed or was killed). */
export function wrkSummary(output: string): WrkSummary | null {
  const json = /WRKJSON (\{.*\})/.exec(output)?.[1];
  if (json === undefined) return null;
  const w = JSON.parse(json) as Omit<WrkSummary, "socketErrors" | "rps">;
  return { ...w, socketErrors: w.errors_connect + w.errors_read + w.errors_write + w.errors_timeout, rps: Math.round(w.requests / (w.duration_us / 1e6)) };
}

/** A column the live fleet adds to the users table: its SQL type, and its value in row `g` of the first rows as an SQL expression. */
export interface ExtraColumn {
  name: string;
  type: string;
  value: string;
}

/**
 * Creates the fleet's `users` table with `rows` rows (ids 1…rows): id, name, email, status
 * (`active`, or `inactive` for every third row), role (an enum), age, created_at, then the
 * `extra` columns. `status` is text, or with `statusEnum` a PostgreSQL enum of those two values
 * (a snapshot's enum column then: the seed's shape, which bench/http.ts's cheap mix is made for).
 */
export async function createUsersTable(sql: postgres.Sql, rows: number, extra: readonly ExtraColumn[] = [], options: { statusEnum?: boolean } = {}): Promise<void> {
  const statusType = options.statusEnum === true ? "status" : "text";
  await sql
    .unsafe(`
    CREATE TYPE role AS ENUM ('owner', 'admin', 'member', 'viewer');
    ${options.statusEnum === true ? "CREATE TYPE status AS ENUM ('active', 'inactive');" : ""}
    CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL, email text NOT NULL, status ${statusType} NOT NULL, role role, age int, created_at timestamptz${extra.map((c) => `, ${c.name} ${c.type}`).join("")});
    INSERT INTO users SELECT g, 'User ' || g, 'user' || g || '@example.com', (CASE WHEN g % 3 = 0 THEN 'inactive' ELSE 'active' END)::${statusType},
      (ARRAY['owner','admin','member','viewer'])[1 + g % 4]::role, 18 + g % 60, timestamptz '2020-01-01' + g * interval '1 minute'${extra.map((c) => `, ${c.value}`).join("")}
    FROM generate_series(1, ${rows}) AS g;`)
    .simple();
}

/** One replica: its port, its current process, and the log file of each of its starts. */
export interface Replica {
  port: number;
  child: Subprocess;
  logs: string[];
}

/** A fleet being set up or running; see the module comment. */
export interface Fleet {
  /** The run's temporary directory (removed by {@link Fleet.cleanup}). */
  dir: string;
  pg: TestPostgres;
  /** One connection to PostgreSQL. */
  sql: postgres.Sql;
  /** `s3://fleet/users` or `<dir>/shared`, once {@link Fleet.useLocation} has run. */
  location: string;
  /** The environment of every child: this process's, with the S3 variables for s3rver. */
  env: Record<string, string | undefined>;
  /** Sets the location up: a bucket on s3rver, or a shared directory. */
  useLocation(kind: "s3" | "dir"): Promise<void>;
  /** The location's manifest, or null (none yet, or unreadable). */
  manifest(): Promise<Manifest | null>;
  replicas: Replica[];
  /** Spawns `serve --source <location> --port <port> <args>` logging to a new file; returns the child and the file. */
  spawnReplica(port: number, args: string[]): { child: Subprocess; logFile: string };
  /** Spawns a replica on each of `ports` (added to {@link Fleet.replicas}). */
  addReplicas(ports: number[], args: string[]): void;
  /** Kills a replica with SIGKILL, waits for its exit, and starts it again on its port with `args`. */
  restartReplica(replica: Replica, args: string[]): Promise<void>;
  /** Starts nginx over the first two replicas (deploy/nginx.conf, ports rewritten); returns its port. */
  startNginx(): Promise<number>;
  /**
   * Starts wrk (2 threads, 32 connections, `seconds`) through nginx on `port`, replaying the
   * request list `lines` (METHOD<TAB>target[<TAB>JSON body], bench/wrk/mix.lua).
   */
  startWrk(port: number, seconds: number, lines: string[]): { child: Subprocess; output: Promise<string> };
  /** A child the cleanup kills with SIGKILL (its whole process group when `group`) unless it has exited. */
  track(child: Subprocess, group?: boolean): void;
  /** Stops everything this run started (each once) and removes the directory. */
  cleanup(): Promise<void>;
}

/**
 * Starts PostgreSQL (`logical`: with `wal_level = logical`) and opens a fleet in a new temporary
 * directory named after `name`; SIGINT and SIGTERM run its cleanup and exit 130 and 143.
 * Blocks while PostgreSQL starts (call it before anything that answers from this process).
 */
export function openFleet(name: string, options: { logical?: boolean; log: Log }): Fleet {
  const { log } = options;
  const dir = mkdtempSync(join(tmpdir(), `users-${name}-`));
  const pg = startPostgres({ logical: options.logical === true });
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  let s3: TestS3 | null = null;
  let nginxConf = "";
  const tracked: { child: Subprocess; group: boolean }[] = [];
  let cleaned: Promise<void> | null = null;
  const fleet: Fleet = {
    dir,
    pg,
    sql,
    location: "",
    env: { ...process.env },
    replicas: [],
    async useLocation(kind) {
      if (kind === "s3") {
        s3 = await startS3(dir, "fleet");
        fleet.location = "s3://fleet/users";
        fleet.env = { ...process.env, ...s3.env };
        delete fleet.env.S3_ENDPOINT;
        log(`s3rver on ${s3.env.AWS_ENDPOINT_URL}: location ${fleet.location}`);
      } else {
        fleet.location = join(dir, "shared");
        log(`location: directory ${fleet.location}`);
      }
    },
    manifest: async () => readManifest(openStorage(fleet.location)).catch(() => null),
    spawnReplica(port, args) {
      const logFile = join(dir, `replica-${port}-${fleet.replicas.find((r) => r.port === port)?.logs.length ?? 0}.log`);
      const child = Bun.spawn([...CLI, "serve", "--source", fleet.location, "--port", String(port), "--cache-dir", join(dir, `replica-${port}`), "--no-demo", ...args], {
        cwd: ROOT,
        env: fleet.env,
        stdout: "ignore",
        stderr: Bun.file(logFile), // pino's JSON lines
      });
      return { child, logFile };
    },
    addReplicas(ports, args) {
      for (const port of ports) {
        const { child, logFile } = fleet.spawnReplica(port, args);
        fleet.replicas.push({ port, child, logs: [logFile] });
      }
    },
    async restartReplica(replica, args) {
      replica.child.kill("SIGKILL");
      await replica.child.exited;
      const again = fleet.spawnReplica(replica.port, args);
      replica.child = again.child;
      replica.logs.push(again.logFile);
    },
    async startNginx() {
      const prefix = join(dir, "nginx");
      mkdirSync(join(prefix, "logs"), { recursive: true });
      const port = freePort();
      const conf = readFileSync(join(ROOT, "deploy", "nginx.conf"), "utf8")
        .replace("server 127.0.0.1:3001", `server 127.0.0.1:${fleet.replicas[0].port}`)
        .replace("server 127.0.0.1:3002", `server 127.0.0.1:${fleet.replicas[1].port}`)
        .replace("listen 8080;", `listen 127.0.0.1:${port};`);
      writeFileSync(join(prefix, "nginx.conf"), conf);
      await runAsync([NGINX, "-c", join(prefix, "nginx.conf"), "-p", `${prefix}/`]);
      nginxConf = join(prefix, "nginx.conf");
      return port;
    },
    startWrk(port, seconds, lines) {
      const list = join(dir, `requests-${tracked.length}.tsv`);
      writeFileSync(list, `${lines.join("\n")}\n`);
      const child = Bun.spawn(["wrk", "-t2", "-c32", `-d${seconds}s`, "--timeout", "10s", "-s", join(ROOT, "bench", "wrk", "mix.lua"), `http://127.0.0.1:${port}`, "--", list], { stdout: "pipe", stderr: "ignore" });
      fleet.track(child);
      return { child, output: new Response(child.stdout).text() };
    },
    track(child, group = false) {
      tracked.push({ child, group });
    },
    cleanup() {
      cleaned ??= (async () => {
        for (const { child, group } of tracked) {
          if (child.exitCode !== null || child.signalCode !== null) continue;
          try {
            if (group) process.kill(-child.pid, "SIGKILL"); // the process and the children it runs
            else child.kill("SIGKILL");
          } catch {}
        }
        for (const r of fleet.replicas) r.child.kill("SIGKILL");
        if (nginxConf !== "") {
          const master = Number(readFileSync(join(dir, "nginx", "nginx.pid"), "utf8"));
          const stopped = await runAsync([NGINX, "-s", "stop", "-c", nginxConf, "-p", `${join(dir, "nginx")}/`]).then(
            () => true,
            (e) => {
              log(`nginx stop: ${(e as Error).message}`);
              return false;
            },
          );
          // `nginx -s stop` only signals the master, which exits after its workers
          if (stopped) await whenEnded([master]);
        }
        await Promise.all(fleet.replicas.map((r) => r.child.exited));
        await Promise.all(tracked.map(({ child }) => child.exited));
        await sql.end({ timeout: 5 }).catch(() => {});
        await s3?.stop().catch(() => {});
        await pg.stop().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      })();
      return cleaned;
    },
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      log(`${signal}: stopping${waiting.size > 0 ? ` (while waiting for ${[...waiting].join("; ")})` : ""}`);
      void fleet.cleanup().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
    });
  }
  return fleet;
}
