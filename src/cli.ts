#!/usr/bin/env bun
/**
 * The one command-line entry: `serve`, `generate`, `snapshot build`, `snapshot info`, and
 * `--version`. Run `bun src/cli.ts --help` (or the compiled binary with --help).
 */
import { existsSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { resolve } from "node:path";
import { SingleBar } from "cli-progress";
import { Command, InvalidArgumentError, Option } from "commander";
import type { Logger } from "pino";
import { demoPlugin } from "./demo/plugin.ts";
import { type UserFileFormat, writeUsers } from "./generate/users.ts";
import { DEFAULT_MAX_PAGE_SIZE } from "./http/app.ts";
import { createLogger } from "./log.ts";
import packageJson from "../package.json" with { type: "json" };
import type { InputFormat } from "./ingest/read.ts";
import { type BuildProgress, buildSnapshotFromFile, buildSnapshotFromGenerator, buildSnapshotFromPostgres } from "./snapshot/build-file.ts";
import { SnapshotError, loadSnapshot } from "./snapshot/load.ts";
import { publishSnapshot, rollbackSnapshot } from "./publish/publish.ts";
import { followSource, waitForFirst } from "./publish/follow.ts";
import { type StartingServer, startStartingServer } from "./http/starting.ts";
import { freePort, superviseWorkers } from "./workers.ts";
import { rssOf } from "./rss.ts";
import { removePendingTemporaryFiles } from "./snapshot/write.ts";
import { parseApiKeysList, readApiKeysFile } from "./http/api-keys.ts";
import { parseCorsOrigins } from "./http/cors.ts";
import { DEFAULT_RESOURCE, parseResourceName } from "./http/resource.ts";
import { parsePort, startServer } from "./server.ts";

/** The embedded default dataset: path, rows and seed (more than the seed's 1000-row threshold). */
export const DEFAULT_DATA = { path: "data/users.snap", count: 100_000, seed: 1 } as const;

function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    }
    return n;
  };
}

/** A progress bar on stderr when it is a terminal; otherwise nothing. */
function progressBar(label: string) {
  if (!process.stderr.isTTY) return { update: (_p: BuildProgress) => {}, stop: () => {} };
  const bar = new SingleBar({ format: `${label} {phase} [{bar}] {percentage}%`, stream: process.stderr, hideCursor: true });
  let started = false;
  return {
    update(p: BuildProgress) {
      if (!started) {
        bar.start(100, 0, { phase: p.phase });
        started = true;
      }
      // Standard input has no known size: 0 while it is read.
      const pct = p.done !== undefined ? (p.total ? Math.floor((100 * p.done) / p.total) : 0) : 100;
      bar.update(pct, { phase: p.phase.padEnd(8) });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/**
 * A worker's command line for `serve --workers N`: this program's `serve` with the same options,
 * over `snapshot`, on `port`, with `--reuse-port`, without `--workers`, `--source`, `--poll`.
 */
function workerCommand(snapshot: string, port: number): string[] {
  const args = process.argv.slice(process.argv.indexOf("serve") + 1);
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const [name] = args[i].split("=");
    if (["--workers", "--source", "--poll", "--port", "--snapshot"].includes(name)) {
      if (!args[i].includes("=")) i++;
      continue;
    }
    kept.push(args[i]);
  }
  // From source: bun <entry script>; compiled: the binary itself.
  const program = Bun.main.startsWith("/$bunfs/") ? [process.execPath] : [process.execPath, Bun.main];
  return [...program, "serve", ...kept, "--snapshot", snapshot, "--port", String(port), "--reuse-port"];
}

/** The snapshot id in a snapshot file's header (checked structure, no section checksums). */
function readSnapshotId(path: string): string {
  return loadSnapshot(path, { verify: false }).header.checksum;
}

/** How `snapshot build` names the input formats on stderr. */
const FORMAT_NAMES: Record<InputFormat, string> = { ndjson: "NDJSON", json: "a JSON array", csv: "CSV" };

/** Prints a build report on stderr. */
function report(what: string, r: { rows: number; bytes: number; readMs: number; indexMs: number; writeMs: number; snapshotId: string }) {
  const mib = (r.bytes / 2 ** 20).toFixed(1);
  process.stderr.write(
    `${what}: ${r.rows} rows, ${mib} MiB, snapshot ${r.snapshotId} (read ${Math.round(r.readMs)} ms, index ${Math.round(r.indexMs)} ms, write ${Math.round(r.writeMs)} ms)\n`,
  );
}

/**
 * Makes sure `path` holds a loadable snapshot of generated users (the default data): builds it
 * when the file is absent, and again when the loader refuses it — a file of an older format
 * version after an upgrade, say. Generated data loses nothing by a rebuild; a snapshot of the
 * user's own data is never rebuilt this way (`serve --snapshot` refuses it with the reason).
 * @param spec rows and seed of the generator
 * @throws the build's errors (the file system's)
 */
export function ensureGeneratedSnapshot(path: string, spec: { count: number; seed: number }, logger: Logger): void {
  let reason = "first start";
  if (existsSync(path)) {
    try {
      loadSnapshot(path, { verify: false });
      return;
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error;
      reason = error.message;
    }
  }
  logger.info({ snapshot: path, rows: spec.count, reason }, "building the default dataset");
  const r = buildSnapshotFromGenerator(spec, path);
  logger.info({ rows: r.rows, bytes: r.bytes, ms: Math.round(r.readMs + r.indexMs + r.writeMs) }, "default dataset built");
}

/** Builds the command tree. */
export function createCli(): Command {
  const program = new Command()
    .name("users-listing")
    .description("Server-side listing service for data tables: GET and POST /api/users over a columnar snapshot.")
    // Read from package.json when this module is built, so the compiled binary knows it too.
    .version(packageJson.version, "-V, --version", "print the version and exit")
    .showHelpAfterError();

  program
    .command("serve")
    .description(`serve /api/users; without --snapshot, serves ${DEFAULT_DATA.path}, building ${DEFAULT_DATA.count} generated users there first if absent or refused`)
    .option("--snapshot <path>", "snapshot file to serve")
    .option("--port <port>", "port (env PORT; 0 picks a free one; default 3000)", (value: string) => parsePort(value, "--port"))
    .option("--host <host>", "host to bind (env HOST)", process.env.HOST ?? "127.0.0.1")
    .option("--max-page-size <rows>", "largest pageSize / row window", integer(1, 1_000_000), DEFAULT_MAX_PAGE_SIZE)
    .option("--no-verify", "skip section checksums at start-up (structure is still checked)")
    .option("--cache-dir <dir>", "where the server keeps its private copy of the snapshot (env SNAPSHOT_CACHE_DIR; default .snapshot-cache beside the snapshot)")
    .option("--reuse-port", "let several processes share the port (SO_REUSEPORT)")
    .option("--no-demo", "do not serve the demo page (AG Grid and TanStack Table clients) at /")
    .option("--cors-origin <origins>", "let these origins read the API from a browser: a comma list, or * (env CORS_ORIGIN; default: CORS off)")
    .option("--api-keys-file <path>", "require Authorization: Bearer <key> on /api/* and /metrics; one key a line, # comments (env API_KEYS: a comma list; default: keys off)")
    .option("--source <location>", "follow a published location (s3://bucket/prefix or a directory, see snapshot publish): download its current snapshot, serve it, poll for new ones")
    .option("--poll <seconds>", "with --source: seconds between polls of the manifest", integer(1, 86_400), 10)
    .option("--workers <n>", "run N server processes on the port (SO_REUSEPORT), each over its own private copy of the snapshot; restarted when one dies", integer(1, 256), 1)
    .option("--resource <name>", `serve the API under /api/NAME instead of /api/${DEFAULT_RESOURCE}: [a-z][a-z0-9_-]{0,63} (env RESOURCE)`)
    .option("--access <file>", "access control: who sees which rows and columns, from a JSON policy of roles, JWT settings and keys (env ACCESS_FILE; replaces --api-keys-file; SIGHUP re-reads it)")
    .action(async (opts) => {
      // Configuration errors stop here, before any work: the message, and exit code 1.
      if (opts.source !== undefined && opts.snapshot !== undefined) throw new InvalidArgumentError("give --snapshot or --source, not both");
      const port: number = opts.port ?? (process.env.PORT !== undefined && process.env.PORT !== "" ? parsePort(process.env.PORT, "PORT") : 3000);
      const cors = parseCorsOrigins(opts.corsOrigin ?? process.env.CORS_ORIGIN);
      const apiKeys = opts.apiKeysFile !== undefined ? readApiKeysFile(opts.apiKeysFile) : parseApiKeysList(process.env.API_KEYS);
      const resource =
        opts.resource !== undefined
          ? parseResourceName(opts.resource, "--resource")
          : process.env.RESOURCE !== undefined && process.env.RESOURCE !== ""
            ? parseResourceName(process.env.RESOURCE, "RESOURCE")
            : DEFAULT_RESOURCE;
      const logger = createLogger();
      let snapshot: string = opts.snapshot;
      const cacheDir: string | undefined = opts.cacheDir ?? (process.env.SNAPSHOT_CACHE_DIR || undefined);
      // a replica of a published location keeps its downloads beside its private copies
      const replicaDir = resolve(cacheDir ?? ".replica", "downloads");
      let starting: StartingServer | null = null;
      if (opts.source !== undefined) {
        // /readyz answers 503 until the first snapshot is in (docs/api.md "Operations"); the
        // real server then takes the placeholder's socket over
        starting = opts.workers > 1 ? null : startStartingServer({ port, host: opts.host, reusePort: opts.reusePort === true }, logger);
        snapshot = (await waitForFirst(opts.source, replicaDir, opts.poll, logger)).path;
      } else if (snapshot === undefined) {
        snapshot = resolve(DEFAULT_DATA.path);
        ensureGeneratedSnapshot(snapshot, DEFAULT_DATA, logger);
      }
      if (opts.workers > 1) {
        const workerPort = port === 0 ? freePort(opts.host) : port;
        const supervisor = superviseWorkers(opts.workers, workerCommand(snapshot, workerPort), logger);
        logger.info({ workers: opts.workers, port: workerPort }, "supervising workers");
        const rssTimer = setInterval(() => {
          logger.info({ rss: supervisor.pids().map((pid) => ({ pid, rssBytes: rssOf(pid) })) }, "workers' resident memory");
        }, 60_000);
        const stopFollowingWorkers =
          opts.source === undefined
            ? () => {}
            : followSource({ snapshotId: () => servedId, reload: () => {
                servedId = readSnapshotId(snapshot);
                supervisor.reload();
              } }, opts.source, replicaDir, opts.poll, logger);
        let servedId = readSnapshotId(snapshot);
        const stopAll = () => {
          clearInterval(rssTimer);
          stopFollowingWorkers();
          supervisor.stop().finally(() => process.exit(0));
        };
        process.on("SIGINT", stopAll);
        process.on("SIGTERM", stopAll);
        process.on("SIGHUP", () => supervisor.reload());
        return;
      }
      const running = startServer({
        snapshot,
        port,
        host: opts.host,
        maxPageSize: opts.maxPageSize,
        verify: opts.verify,
        cacheDir,
        reusePort: opts.reusePort === true,
        listener: starting?.server,
        plugins: opts.demo === false ? [] : [demoPlugin(`/api/${resource}`)],
        logger,
        cors,
        apiKeys,
        resource,
        access: opts.access ?? (process.env.ACCESS_FILE || undefined),
      });
      // SIGHUP also re-reads the access policy (after the snapshot: the policy is checked against the schema served then)
      process.on("SIGHUP", () => {
        try {
          running.access?.reload();
        } catch (error) {
          const problems = (error as { problems?: string[] }).problems ?? [(error as Error).message];
          logger.error({ problems }, "access policy reload refused; still serving the previous policy");
        }
      });
      const stopFollowing =
        opts.source === undefined
          ? () => {}
          : followSource({ snapshotId: () => running.engine().store.snapshotId, reload: running.reload }, opts.source, replicaDir, opts.poll, logger);
      // Drain, then exit 0 (docs/api.md "HTTP envelope", Operations); a second signal waits for the same drain.
      const shutdown = () => {
        stopFollowing();
        running.drain().finally(() => process.exit(0));
      };
      process.on("SIGINT", shutdown);
      process.on("SIGTERM", shutdown);
    });

  program
    .command("generate")
    .description("write deterministic realistic users to a file")
    .requiredOption("--count <rows>", "rows to generate", integer(0))
    .option("--seed <n>", "PRNG seed", integer(0, 2 ** 32 - 1), 1)
    .option("--format <format>", "ndjson, json or csv", "ndjson")
    .option("--wide", "add created_at, birthday, role, age, verified, notes and prefs after the four fields")
    .requiredOption("--out <path>", "output file (written atomically)")
    .action(async (opts) => {
      if (!["ndjson", "json", "csv"].includes(opts.format)) throw new InvalidArgumentError("--format must be ndjson, json or csv");
      const bar = progressBar("generate");
      const options = { count: opts.count, seed: opts.seed, format: opts.format as UserFileFormat, wide: opts.wide === true };
      await writeUsers(opts.out, options, (rows) =>
        bar.update({ phase: "generate", done: rows, total: opts.count }),
      );
      bar.stop();
      process.stderr.write(`wrote ${opts.count} users to ${opts.out}\n`);
    });

  const snapshot = program.command("snapshot").description("build or inspect snapshot files");
  snapshot
    .command("build")
    .description(
      "build a snapshot from NDJSON, a JSON array, CSV, or a PostgreSQL table or query (records validated; the first bad one, or an input without records, stops the build)",
    )
    .argument("[input]", "data file (.ndjson/.jsonl, .json or .csv; .gz is gunzipped while read), or - for standard input; none with --from")
    .option("--from <url>", "read from PostgreSQL (postgres://user:password@host:port/database) instead of a file, with --table or --query")
    .option("--table <name>", "with --from: the table (schema-qualified or not) whose rows are the users")
    .option("--query <sql>", "with --from: a query whose rows are the users")
    .option("-o, --output <path>", "snapshot to write (atomically)", DEFAULT_DATA.path)
    .addOption(
      new Option("--format <format>", "input format (default: from the file name, without .gz, else from the content)").choices(["ndjson", "json", "csv"]),
    )
    .option("--schema <file>", 'column kinds as JSON {"columns":[{"id","kind","values"?}]}; columns it does not list are inferred from their values')
    .action(async (input: string | undefined, opts) => {
      if (opts.from !== undefined) {
        if (input !== undefined) throw new InvalidArgumentError("give an input file or --from, not both");
        if ((opts.table === undefined) === (opts.query === undefined)) throw new InvalidArgumentError("--from needs --table or --query (one of them)");
      } else if (input === undefined) throw new InvalidArgumentError("give an input file (or - for standard input), or --from postgres://…");
      else if (opts.table !== undefined || opts.query !== undefined) throw new InvalidArgumentError("--table and --query go with --from");
      const bar = progressBar("build");
      // While the snapshot is written, SIGINT and SIGTERM remove the temporary file and exit
      // with 128 + the signal's number (130, 143), the previous snapshot untouched. Before the
      // write there is no file to remove and the default action stays (a handler would wait
      // for the synchronous index build to yield).
      const onSignal = (signal: NodeJS.Signals) => {
        removePendingTemporaryFiles();
        bar.stop();
        process.exit(128 + osConstants.signals[signal]);
      };
      let handling = false;
      try {
        const onProgress = (p: BuildProgress) => {
          if (p.phase === "write" && !handling) {
            handling = true;
            process.on("SIGINT", onSignal);
            process.on("SIGTERM", onSignal);
          }
          bar.update(p);
        };
        const schema = {
          schemaFile: opts.schema as string | undefined,
          onSchema: (columns: readonly { id: string; kind: string; values?: string[] }[]) =>
            process.stderr.write(`columns: ${columns.map((c) => `${c.id} ${c.kind}${c.values ? ` (${c.values.join("|")})` : ""}`).join(", ")}\n`),
        };
        let r: Awaited<ReturnType<typeof buildSnapshotFromFile>>;
        if (opts.from !== undefined) {
          process.stderr.write(`reading ${opts.table !== undefined ? `table ${opts.table}` : "a query"} from PostgreSQL\n`);
          r = await buildSnapshotFromPostgres({ url: opts.from, table: opts.table, query: opts.query }, opts.output, onProgress, schema);
        } else {
          r = await buildSnapshotFromFile(input as string, opts.output, onProgress, {
            format: opts.format as InputFormat | undefined,
            onFormat: ({ file, format, gzip }) => process.stderr.write(`reading ${file} as ${FORMAT_NAMES[format]}${gzip ? " (gzip)" : ""}\n`),
            ...schema,
          });
        }
        bar.stop();
        report(`built ${opts.output}`, r);
      } finally {
        bar.stop();
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
    });
  snapshot
    .command("generate")
    .description("build a snapshot of generated users directly (no intermediate file)")
    .requiredOption("--count <rows>", "rows to generate", integer(0))
    .option("--seed <n>", "PRNG seed", integer(0, 2 ** 32 - 1), 1)
    .option("-o, --output <path>", "snapshot to write (atomically)", DEFAULT_DATA.path)
    .action((opts) => {
      const bar = progressBar("build");
      const r = buildSnapshotFromGenerator({ count: opts.count, seed: opts.seed }, opts.output, (p) => bar.update(p));
      bar.stop();
      report(`built ${opts.output}`, r);
    });
  snapshot
    .command("info")
    .description("validate a snapshot and print its header")
    .argument("<file>", "snapshot file")
    .action((file: string) => {
      const loaded = loadSnapshot(file);
      const { sections, ...header } = loaded.header;
      process.stdout.write(`${JSON.stringify({ ...header, bytes: loaded.bytes, loadMs: Math.round(loaded.loadMs), sections: sections.length }, null, 2)}\n`);
    });
  snapshot
    .command("publish")
    .description("upload a snapshot for replicas under a content-addressed key, then point the location's manifest at it (earlier versions kept for rollback)")
    .argument("<file>", "snapshot file")
    .requiredOption("--to <location>", "s3://bucket/prefix (S3_ENDPOINT or AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION) or a shared directory")
    .action(async (file: string, opts) => {
      const t = performance.now();
      const manifest = await publishSnapshot(file, opts.to);
      const c = manifest.current;
      process.stderr.write(`published ${c.snapshotId} (${c.rows} rows, ${(c.bytes / 2 ** 20).toFixed(1)} MiB) to ${opts.to} in ${Math.round(performance.now() - t)} ms; ${manifest.previous.length} earlier version(s) kept\n`);
    });
  snapshot
    .command("rollback")
    .description("make an earlier published version current again (the one before the current, or --id)")
    .requiredOption("--to <location>", "the location the snapshots were published to")
    .option("--id <snapshotId>", "the earlier version to make current")
    .action(async (opts) => {
      const manifest = await rollbackSnapshot(opts.to, opts.id);
      process.stderr.write(`current at ${opts.to}: ${manifest.current.snapshotId} (${manifest.current.rows} rows, built ${manifest.current.createdAt})\n`);
    });
  return program;
}

if (import.meta.main) {
  createCli()
    .parseAsync(process.argv)
    .catch((error: Error) => {
      process.stderr.write(`error: ${error.message}\n`);
      process.exit(1);
    });
}
