/**
 * Test helper: a real PostgreSQL server (Debian's packages; `sh scripts/install-postgres.sh`
 * installs them when missing) in a temporary directory, on a free loopback port, trusted local
 * connections, fsync off. As root, the server runs as the `postgres` user (initdb refuses root).
 */
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running PostgreSQL: its URL (user `app`, database `postgres`) and how to stop it. */
export interface TestPostgres {
  url: string;
  stop: () => Promise<void>;
  /** Stops the server at once (pg_ctl -m immediate: as a crash would) and starts it again on the same port and data. */
  restart: () => void;
}

/** Options of {@link startPostgres}. */
export interface PostgresOptions {
  /** `wal_level = logical` with room for replication slots and WAL senders (live replicas' publisher). */
  logical?: boolean;
}

/** The directory of initdb and pg_ctl: Debian's newest /usr/lib/postgresql/<v>/bin, else the PATH's. */
function binDir(): string {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(root, versions[0], "bin");
  }
  const found = Bun.which("initdb");
  if (found === null) throw new Error("PostgreSQL is not installed: run `sh scripts/install-postgres.sh` (as root)");
  return join(found, "..");
}

/** A free TCP port on 127.0.0.1. */
function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** Runs a PostgreSQL program, as `postgres` when this process is root. */
function run(args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? ["runuser", "-u", "postgres", "--", ...args] : args;
  const result = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${args[0]} failed (${result.exitCode}): ${result.stderr.toString()}${result.stdout.toString()}`);
}

/** Starts a fresh server (initdb + pg_ctl start, a few seconds). */
export function startPostgres(options: PostgresOptions = {}): TestPostgres {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "users-pg-"));
  if (process.getuid?.() === 0) {
    const id = Bun.spawnSync(["id", "-u", "postgres"], { stdout: "pipe" });
    const gid = Bun.spawnSync(["id", "-g", "postgres"], { stdout: "pipe" });
    chownSync(dir, Number(id.stdout.toString().trim()), Number(gid.stdout.toString().trim()));
  }
  const data = join(dir, "data");
  const port = freePort();
  run([join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "app", "-E", "UTF8", "--no-locale", "--no-sync"]);
  const logical = options.logical ? " -c wal_level=logical -c max_replication_slots=8 -c max_wal_senders=8" : "";
  const start = () => run([join(bin, "pg_ctl"), "-D", data, "-w", "-l", join(dir, "log"), "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off${logical}`, "start"]);
  start();
  return {
    url: `postgres://app@127.0.0.1:${port}/postgres`,
    restart: () => {
      run([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]);
      start();
    },
    stop: async () => {
      try {
        run([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
