#!/usr/bin/env bun
/**
 * The one command-line entry: `serve`, `generate`, `snapshot build`, `snapshot info`, and
 * `--version`. Run `bun src/cli.ts --help` (or the compiled binary with --help).
 */
import { existsSync, unwatchFile, watchFile } from "node:fs";
import { constants as osConstants } from "node:os";
import { dirname, join, resolve } from "node:path";
import { SingleBar } from "cli-progress";
import { Command, InvalidArgumentError, Option } from "commander";
import type { Logger } from "pino";
import { demoPlugin } from "./demo/plugin.ts";
import { type UserFileFormat, writeUsers } from "./generate/users.ts";
import { WIDE_COLUMNS } from "./generate/wide.ts";
import { DEFAULT_MAX_PAGE_SIZE } from "./http/app.ts";
import { createLogger } from "./log.ts";
import packageJson from "../package.json" with { type: "json" };
import type { InputFormat } from "./ingest/read.ts";
import { type BuildProgress, type TableSummary, buildSnapshotFromFile, buildSnapshotFromPostgres } from "./snapshot/build-file.ts";
import { buildSnapshotFromGenerator } from "./generate/snapshot.ts";
import { delimiterProblem } from "./ingest/csv.ts";
import type { ColumnSpec } from "./schema/kinds.ts";
import type { ChangeBatch } from "./live/changes.ts";
import { SnapshotError, loadSnapshot } from "./snapshot/load.ts";
import { publishSnapshot, rollbackSnapshot } from "./publish/publish.ts";
import { type Announced, type FirstSnapshot, type FollowOptions, type SourceStatus, createSourceTracker, followSource, followSupervised, publicSourceStatus, supervisedFirst, waitForFirst } from "./publish/follow.ts";
import { type StartingServer, startStartingServer } from "./http/starting.ts";
import { createPruner } from "./io/prune.ts";
import { BACKGROUND_NICE, DEFAULT_IO_TIMEOUT_MS, createFileThreads } from "./io/threads.ts";
import { runPublisher } from "./publish/live-publisher.ts";
import { liveLocation, snapshotMaker } from "./publish/live-location.ts";
import { tableColumns } from "./publish/pg-changes.ts";
import { type PreparedCopy, defaultCacheDir, defaultLocationDir } from "./snapshot/private-copy.ts";
import { type Supervisor, freePort, superviseWorkers, watchSupervisor } from "./workers.ts";
import { rssOf } from "./rss.ts";
import { removePendingTemporaryFiles } from "./snapshot/write.ts";
import { parseApiKeysList, readApiKeysFile } from "./http/api-keys.ts";
import { parseCorsOrigins } from "./http/cors.ts";
import { DEFAULT_RESOURCE, parseResourceName } from "./http/resource.ts";
import { type RunningServer, parsePort, startServer } from "./server.ts";
import { checkListenHost } from "./http/listen.ts";
import { type DataFileOptions, ensureDataSnapshot, isDataFile } from "./snapshot/data-file.ts";
import { DEFAULT_MAX_QUEUED, DEFAULT_QUERY_TIMEOUT_MS } from "./engine/scheduler.ts";
import { DEFAULT_MAX_EVENT_STREAMS } from "./events/change-feed.ts";

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

/** A commander parser of a number of seconds from `min` to `max` (fractions allowed: `0.5`). */
function seconds(min: number, max: number) {
  return (value: string) => {
    const n = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(`must be a number of seconds from ${min} to ${max} (fractions allowed, e.g. 0.5)`);
    }
    return n;
  };
}

/**
 * Adds the options of the users generator (src/generate/users.ts) that `generate` and
 * `snapshot generate` share: --count (rows), --seed (the PRNG's, 0 … 2^32 − 1, default 1) and
 * --wide (the wide table's columns, src/generate/wide.ts `WIDE_COLUMNS`, after the four).
 */
function generatorOptions(command: Command): Command {
  return command
    .requiredOption("--count <rows>", "rows to generate", integer(0))
    .option("--seed <n>", "PRNG seed", integer(0, 2 ** 32 - 1), 1)
    .option("--wide", `add ${WIDE_COLUMNS.slice(0, -1).join(", ")} and ${WIDE_COLUMNS.at(-1)} after the four columns`);
}

/**
 * The options that say how an input becomes a table, as `snapshot build` takes them (`help`) and
 * as `serve` takes them for a data file it builds the same way (`brief`), with each one's parser.
 */
const TABLE_OPTIONS: readonly { flags: string; help: string; brief: string; parse?: (value: string) => unknown }[] = [
  {
    flags: "--schema <file>",
    help: 'the key and column kinds as JSON {"key"?: "…", "columns":[{"id","kind","values"?}]}; columns it does not list are inferred from their values',
    brief: "the key and column kinds",
  },
  { flags: "--key <column>", help: "the key column: unique, never null, a number or a text such as a UUID (default: the schema file's key, else id)", brief: "the key column" },
  { flags: "--exclude <columns>", help: "leave these fields out (a comma list): never read into the snapshot (with --from, not even selected)", brief: "fields left out", parse: parseList },
  {
    flags: "--allow-empty",
    help: "build a table of no rows from an input without records (its columns from --schema, the CSV header or the PostgreSQL table)",
    brief: "serve an input without records as an empty table",
  },
  { flags: "--delimiter <char>", help: "the CSV field delimiter: one character, or tab (default ,)", brief: "the CSV field delimiter", parse: parseDelimiter },
];

/** Adds {@link TABLE_OPTIONS} to `command`: `snapshot build`'s, or `serve`'s for a data file. */
function tableOptions(command: Command, as: "build" | "serve"): void {
  for (const o of TABLE_OPTIONS) {
    const help = as === "build" ? o.help : `with a data file: ${o.brief}, as for snapshot build`;
    if (o.parse === undefined) command.option(o.flags, help);
    else command.option(o.flags, help, o.parse);
  }
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
 * over `snapshot`, on `port`, with `--reuse-port`, without `--workers`, `--source`, `--poll`;
 * with `cacheDir` when given, `--managed-snapshot` for the workers of a replica (the
 * supervisor's downloads: linked into the cache, pruned by the supervisor), and `--supervised`
 * (standard input is the supervisor's pipe: workers.ts `watchSupervisor`).
 */
function workerCommand(snapshot: string, port: number, cacheDir: string | undefined, managed: boolean, changesFrom: string | null = null, pollSeconds = 1): string[] {
  const args = process.argv.slice(process.argv.indexOf("serve") + 1);
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const [name] = args[i].split("=");
    if (["--workers", "--source", "--poll", "--port", "--snapshot", "--cache-dir"].includes(name)) {
      if (!args[i].includes("=")) i++;
      continue;
    }
    kept.push(args[i]);
  }
  // From source: bun <entry script>; compiled: the binary itself.
  const program = Bun.main.startsWith("/$bunfs/") ? [process.execPath] : [process.execPath, Bun.main];
  const cache = cacheDir === undefined ? [] : ["--cache-dir", cacheDir];
  const changes = changesFrom === null ? [] : ["--changes-from", changesFrom, "--poll", String(pollSeconds)];
  return [...program, "serve", ...kept, "--snapshot", snapshot, ...cache, ...(managed ? ["--managed-snapshot"] : []), ...changes, "--port", String(port), "--reuse-port", "--supervised"];
}

/** How `snapshot build` names the input formats on stderr. */
const FORMAT_NAMES: Record<InputFormat, string> = { ndjson: "NDJSON", json: "a JSON array", csv: "CSV" };

/** A comma list of names (`--exclude a,b`): trimmed, empty entries dropped. */
function parseList(value: string): string[] {
  const names = value.split(",").map((v) => v.trim()).filter((v) => v !== "");
  if (names.length === 0) throw new InvalidArgumentError("give one or more names, separated by commas");
  return names;
}

/** A CSV delimiter: one character, or `tab` (also `\\t`, as a shell passes it unquoted). */
function parseDelimiter(value: string): string {
  const delimiter = value === "tab" || value === "\\t" ? "\t" : value;
  const problem = delimiterProblem(delimiter);
  if (problem !== null) throw new InvalidArgumentError(problem);
  return delimiter;
}

/**
 * What `snapshot build` prints once the table is decided: every column with its kind (the key
 * marked), the fields left out, and a warning per kept column that looks like a secret.
 */
export function describeTable(summary: TableSummary): string {
  const column = (c: ColumnSpec) => `${c.id} ${c.kind}${c.values ? ` (${c.values.join("|")})` : ""}${c.id === summary.key ? " (key)" : ""}`;
  let text = `columns: ${summary.columns.map(column).join(", ")}\n`;
  if (summary.excluded.length > 0) text += `excluded: ${summary.excluded.join(", ")}\n`;
  for (const warning of summary.warnings) text += `warning: ${warning}\n`;
  return text;
}

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

/** Largest `--query-timeout-ms`: a day, in ms. */
const MAX_QUERY_TIMEOUT_MS = 86_400_000;

/** Largest `--max-event-streams`, in streams. */
const MAX_EVENT_STREAMS_LIMIT = 1_000_000;

/** Largest `--max-queued`, in queries. */
const MAX_QUEUED_LIMIT = 1_000_000;

/**
 * `serve FILE --watch`: when the data file changes (its size or modification time, checked every
 * second), it is built again — in a child process, so that requests go on — and swapped in like
 * a SIGHUP. A failed build is logged, and the version serving keeps serving.
 * @returns a function that stops watching
 */
function watchDataFile(file: string, options: DataFileOptions, dataDir: string, running: RunningServer, logger: Logger): () => void {
  let busy = false;
  let again = false;
  const program = Bun.main.startsWith("/$bunfs/") ? [process.execPath] : [process.execPath, Bun.main];
  const buildInChild = async (input: string, output: string): Promise<null> => {
    const args = [...program, "snapshot", "build", input, "-o", output];
    if (options.schemaFile !== undefined) args.push("--schema", options.schemaFile);
    if (options.key !== undefined) args.push("--key", options.key);
    if (options.exclude !== undefined) args.push("--exclude", options.exclude.join(","));
    if (options.allowEmpty) args.push("--allow-empty");
    if (options.delimiter !== undefined) args.push("--delimiter", options.delimiter);
    const child = Bun.spawn(args, { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
    const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    if (code !== 0) throw new Error(stderr.trim().split("\n").filter((l) => l.startsWith("error:") || l.includes(": ")).pop() ?? `snapshot build exited ${code}`);
    return null;
  };
  const rebuild = async () => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        const t = performance.now();
        const data = await ensureDataSnapshot(file, options, dataDir, buildInChild);
        await running.reload();
        logger.info({ data: file, snapshot: data.name, ms: Math.round(performance.now() - t) }, "the data file changed: built and swapped in");
      } while (again);
    } catch (error) {
      logger.error({ err: error, data: file }, "building the changed data file failed; still serving the previous version");
    } finally {
      busy = false;
    }
  };
  const listener = (now: { mtimeMs: number; size: number }, before: { mtimeMs: number; size: number }) => {
    if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) void rebuild();
  };
  watchFile(file, { interval: 1000 }, listener);
  return () => unwatchFile(file, listener);
}

/** Builds the command tree. */
export function createCli(): Command {
  const program = new Command()
    .name("users-listing")
    .description("Server-side listing service for data tables: GET and POST /api/users over a columnar snapshot.")
    // Read from package.json when this module is built, so the compiled binary knows it too.
    .version(packageJson.version, "-V, --version", "print the version and exit")
    .showHelpAfterError();

  const serve = program
    .command("serve")
    .description(`serve /api/users; without --snapshot, serves ${DEFAULT_DATA.path}, building ${DEFAULT_DATA.count} generated users there first if absent or refused`)
    .option("--snapshot <path>", "snapshot file to serve")
    .option("--port <port>", "port (env PORT; 0 picks a free one; default 3000)", (value: string) => parsePort(value, "--port"))
    .option("--host <host>", "host to bind (env HOST)", process.env.HOST ?? "127.0.0.1")
    .option("--max-page-size <rows>", "largest pageSize / row window", integer(1, 1_000_000), DEFAULT_MAX_PAGE_SIZE)
    .option("--no-verify", "skip section checksums at start-up (structure is still checked)")
    .option("--cache-dir <dir>", "where the server keeps its private copy of the snapshot, and a replica its downloads (env SNAPSHOT_CACHE_DIR; default .snapshot-cache beside the snapshot; with --source, users-listing/replica/<location> in the user's cache directory, $XDG_CACHE_HOME or ~/.cache)")
    .option("--reuse-port", "let several processes share the port (SO_REUSEPORT)")
    .option("--no-demo", "do not serve the demo page (AG Grid and TanStack Table clients) at /")
    .option("--cors-origin <origins>", "let these origins read the API from a browser: a comma list, or * (env CORS_ORIGIN; default: CORS off)")
    .option("--api-keys-file <path>", "require Authorization: Bearer <key> on /api/* and /metrics; one key a line, # comments (env API_KEYS: a comma list; default: keys off)")
    .option("--source <location>", "follow a published location (s3://bucket/prefix or a directory, see snapshot publish): download its current snapshot, serve it, poll for new ones")
    .option("--poll <seconds>", "with --source: seconds between polls of the manifest, fractions allowed (a live table's replica: 0.25 keeps it within a second)", seconds(0.05, 86_400), 10)
    .option("--workers <n>", "run N server processes on the port (SO_REUSEPORT), each over its own private copy of the snapshot; restarted when one dies", integer(1, 256), 1)
    .option("--resource <name>", `serve the API under /api/NAME instead of /api/${DEFAULT_RESOURCE}: [a-z][a-z0-9_-]{0,63} (env RESOURCE)`)
    .option("--query-timeout-ms <ms>", "answer 503 (query_timeout, Retry-After: 1) to an expensive query still running after this many ms (env QUERY_TIMEOUT_MS; default 30000)", integer(1, MAX_QUERY_TIMEOUT_MS))
    .option("--max-event-streams <n>", "answer 503 (Retry-After: 1) to a change event stream (GET /api/<resource>/changes) while this many are open in the process (env MAX_EVENT_STREAMS; default 1000)", integer(0, MAX_EVENT_STREAMS_LIMIT))
    .option("--max-queued <n>", "answer 503 (overloaded, Retry-After: 1) to an expensive query at once while this many wait to run (env MAX_QUEUED; default 1024)", integer(0, MAX_QUEUED_LIMIT))
    .option("--access <file>", "access control: who sees which rows and columns, from a JSON policy of roles, JWT settings and keys (env ACCESS_FILE; replaces --api-keys-file; SIGHUP re-reads it)")
    .option(
      "--io-timeout <seconds>",
      "longest time a read or write of the snapshot file, the cache directory or the source may go without progress; then it is abandoned, logged, and (with --source) tried again at the next poll",
      integer(1, 3600),
      DEFAULT_IO_TIMEOUT_MS / 1000,
    )
    .addOption(new Option("--managed-snapshot", "the snapshot is a replica supervisor's verified download (set by serve --workers with --source)").hideHelp())
    .addOption(new Option("--supervised", "standard input is the supervisor's pipe: its end means the supervisor is gone, and the worker drains and exits (set by serve --workers)").hideHelp())
    .addOption(new Option("--changes-from <location>", "apply the change batches the location publishes for the served snapshot (set by serve --workers with --source)").hideHelp())
    .argument("[file]", "a data file to serve (.csv, .ndjson, .json, optionally .gz): built into a snapshot in the cache directory first, and reused while the file and the options below are unchanged")
    .option("--data <file>", "the data file to serve, as the argument")
    .option("--watch", "with a data file: build it again when it changes and swap the new version in (a failed build keeps the old one serving)");
  tableOptions(serve, "serve");
  serve.action(async (argument: string | undefined, opts) => {
      // Configuration errors stop here, before any work: the message, and exit code 1.
      const dataFile: string | undefined = argument ?? opts.data;
      if (argument !== undefined && opts.data !== undefined) throw new InvalidArgumentError("give the data file as the argument or with --data, not both");
      if ([dataFile, opts.snapshot, opts.source].filter((x) => x !== undefined).length > 1) throw new InvalidArgumentError("give one of a data file, --snapshot or --source");
      if (dataFile === undefined && (opts.watch || opts.schema !== undefined || opts.key !== undefined || opts.exclude !== undefined || opts.allowEmpty || opts.delimiter !== undefined)) {
        throw new InvalidArgumentError("--watch, --schema, --key, --exclude, --allow-empty and --delimiter go with a data file (serve FILE)");
      }
      if (opts.snapshot !== undefined && isDataFile(opts.snapshot)) {
        throw new InvalidArgumentError(`${opts.snapshot} is not a snapshot but a data file: serve it with \`serve ${opts.snapshot}\` (it is built into a snapshot first), or build one with \`snapshot build ${opts.snapshot}\``);
      }
      const port: number = opts.port ?? (process.env.PORT !== undefined && process.env.PORT !== "" ? parsePort(process.env.PORT, "PORT") : 3000);
      checkListenHost(opts.host, process.env.HOST === opts.host && process.env.HOST !== undefined ? "HOST" : "--host");
      const cors = parseCorsOrigins(opts.corsOrigin ?? process.env.CORS_ORIGIN);
      const apiKeys = opts.apiKeysFile !== undefined ? readApiKeysFile(opts.apiKeysFile) : parseApiKeysList(process.env.API_KEYS);
      const resource =
        opts.resource !== undefined
          ? parseResourceName(opts.resource, "--resource")
          : process.env.RESOURCE !== undefined && process.env.RESOURCE !== ""
            ? parseResourceName(process.env.RESOURCE, "RESOURCE")
            : DEFAULT_RESOURCE;
      // an option wins over its environment variable, checked by the same rule
      const fromEnv = (name: string, value: string | undefined, parse: (value: string) => number): number | undefined => {
        if (value === undefined || value === "") return undefined;
        try {
          return parse(value);
        } catch (error) {
          throw new InvalidArgumentError(`${name} ${(error as Error).message} (got "${value}")`);
        }
      };
      const queryTimeoutMs: number = opts.queryTimeoutMs ?? fromEnv("QUERY_TIMEOUT_MS", process.env.QUERY_TIMEOUT_MS, integer(1, MAX_QUERY_TIMEOUT_MS)) ?? DEFAULT_QUERY_TIMEOUT_MS;
      const maxQueued: number = opts.maxQueued ?? fromEnv("MAX_QUEUED", process.env.MAX_QUEUED, integer(0, MAX_QUEUED_LIMIT)) ?? DEFAULT_MAX_QUEUED;
      const maxEventStreams: number = opts.maxEventStreams ?? fromEnv("MAX_EVENT_STREAMS", process.env.MAX_EVENT_STREAMS, integer(0, MAX_EVENT_STREAMS_LIMIT)) ?? DEFAULT_MAX_EVENT_STREAMS;
      const logger = createLogger();
      // A worker of serve --workers: once its supervisor is gone (SIGKILL included), it drains
      // and exits; before it serves, it exits at once.
      let shutdown = (): void => process.exit(0);
      if (opts.supervised === true) {
        watchSupervisor(() => {
          logger.warn("the supervisor is gone: draining, then exiting");
          shutdown();
        });
      }
      const ioTimeoutMs: number = opts.ioTimeout * 1000;
      const managed = opts.managedSnapshot === true;
      // A worker of a replica hears from its supervisor over the IPC channel (from its start:
      // a message without a listener is lost): the source's status, and each version it has
      // downloaded (swapped in by the worker's follower together with its batches).
      let supervisedStatus: SourceStatus | null = null;
      let announced: Announced | null = null;
      let onAnnounce = (_version: Announced) => {};
      if (managed) {
        process.on("message", (message: { sourceStatus?: SourceStatus; announce?: Announced }) => {
          if (message?.sourceStatus !== undefined) supervisedStatus = message.sourceStatus;
          if (message?.announce !== undefined) {
            announced = message.announce;
            onAnnounce(message.announce);
          }
        });
      }
      // Start-up has no request to yield to; once serving, file work runs below the requests.
      const startup = createFileThreads();
      const threads = createFileThreads({ nice: BACKGROUND_NICE });
      let snapshot: string = opts.snapshot;
      let cacheDir: string | undefined = opts.cacheDir ?? (process.env.SNAPSHOT_CACHE_DIR || undefined);
      const dataOptions: DataFileOptions = { schemaFile: opts.schema, key: opts.key, exclude: opts.exclude, allowEmpty: opts.allowEmpty === true, delimiter: opts.delimiter };
      const dataDir = dataFile === undefined ? "" : join(resolve(cacheDir ?? join(dirname(resolve(dataFile)), ".snapshot-cache")), "data");
      if (dataFile !== undefined) {
        const t = performance.now();
        const data = await ensureDataSnapshot(dataFile, dataOptions, dataDir);
        snapshot = data.path;
        if (data.built === null) logger.info({ data: dataFile, snapshot: data.name, ms: Math.round(performance.now() - t) }, "serving the data file's cached build (unchanged file and options)");
        else logger.info({ data: dataFile, snapshot: data.name, rows: data.built.rows, columns: data.built.columns.map((c) => c.id), excluded: data.built.excluded, ms: Math.round(performance.now() - t) }, "built the data file into a snapshot");
        for (const warning of data.built?.warnings ?? []) logger.warn({ data: dataFile }, warning);
      }
      let prepared: PreparedCopy | undefined;
      let firstLive: { snapshotLsn: string; batches: ChangeBatch[] } | undefined;
      let follow: FollowOptions | null = null;
      let starting: StartingServer | null = null;
      let supervisor: Supervisor | null = null;
      if (opts.source !== undefined) {
        // a replica keeps its downloads and its private copies in one directory (the download
        // is linked as the copy)
        cacheDir = resolve(cacheDir ?? defaultLocationDir("replica", opts.source));
        const tracker = createSourceTracker(opts.source, logger, (status) => supervisor?.send({ sourceStatus: status }));
        follow = { location: opts.source, downloadsDir: join(cacheDir, "downloads"), cacheDir, pollSeconds: opts.poll, timeoutMs: ioTimeoutMs, verify: opts.verify, threads, tracker, logger };
        // /readyz answers 503 until the first snapshot is in (docs/api.md "Operations"), with
        // the last poll's outcome; the real server then takes the placeholder's socket over
        starting =
          opts.workers > 1 ? null : startStartingServer({ port, host: opts.host, reusePort: opts.reusePort === true }, logger, () => ({ source: publicSourceStatus(tracker.status()) }));
        const first = (await waitForFirst({ ...follow, threads: startup })) as FirstSnapshot;
        snapshot = first.path;
        prepared = first.prepared;
        if (first.entry.lsn !== undefined) firstLive = { snapshotLsn: first.entry.lsn, batches: first.batches };
      } else if (snapshot === undefined) {
        snapshot = resolve(DEFAULT_DATA.path);
        ensureGeneratedSnapshot(snapshot, DEFAULT_DATA, logger);
      }
      if (opts.workers > 1) {
        const workerPort = port === 0 ? freePort(opts.host) : port;
        const ipc = follow !== null;
        startup.close();
        // the version the workers are to serve, told to each worker that starts and at each swap
        let current: Announced | null = prepared === undefined ? null : { prepared, lsn: firstLive?.snapshotLsn ?? null };
        supervisor = superviseWorkers(opts.workers, workerCommand(snapshot, workerPort, cacheDir, ipc, follow === null ? null : follow.location, follow?.pollSeconds), logger, {
          ipc,
          greeting: () => ({ sourceStatus: follow?.tracker.status(), ...(current === null ? {} : { announce: current }) }),
        });
        const workers = supervisor;
        logger.info({ workers: opts.workers, port: workerPort }, "supervising workers");
        const rssTimer = setInterval(() => {
          logger.info({ rss: workers.pids().map((pid) => ({ pid, rssBytes: rssOf(pid) })) }, "workers' resident memory");
        }, 60_000);
        let stopFollowingWorkers = () => {};
        if (follow !== null && prepared !== undefined) {
          let servedId = prepared.snapshotId;
          const pruner = createPruner(threads, follow.cacheDir, ioTimeoutMs, logger);
          stopFollowingWorkers = followSource(
            {
              snapshotId: () => servedId,
              // each worker swaps it in with the batches listed after it (publish/follow.ts
              // followSupervised), never the snapshot alone
              reload: async (fetched, _batches, entry) => {
                servedId = fetched.prepared.snapshotId;
                current = { prepared: fetched.prepared, lsn: entry.lsn ?? null };
                workers.send({ announce: current });
                // Older copies go once no worker maps them any more.
                pruner.prune(fetched.prepared.path);
              },
            },
            follow,
          );
        }
        const stopAll = () => {
          clearInterval(rssTimer);
          stopFollowingWorkers();
          threads.close();
          workers.stop().finally(() => process.exit(0));
        };
        process.on("SIGINT", stopAll);
        process.on("SIGTERM", stopAll);
        process.on("SIGHUP", () => workers.reload());
        return;
      }
      if (prepared === undefined) {
        // The file named is copied and verified on an I/O thread: a FIFO is refused at once, a
        // hung mount ends after --io-timeout, and neither blocks this process.
        const copies = cacheDir ?? defaultCacheDir(snapshot);
        const prepare = () =>
          startup.run(
            { kind: "prepare", source: snapshot, cacheDir: copies, verify: opts.verify !== false, owned: managed, fallback: true },
            { timeoutMs: ioTimeoutMs, label: `copying and verifying ${snapshot} into ${copies}` },
          );
        if (opts.changesFrom !== undefined) {
          // a worker of a replica: its supervisor's download, with the batches listed after it
          const first = await supervisedFirst({ location: opts.changesFrom, pollSeconds: opts.poll, timeoutMs: ioTimeoutMs, threads: startup, logger }, prepare);
          if (first === null) return;
          prepared = first.prepared;
          firstLive = first.live;
        } else prepared = await prepare();
      }
      startup.close();
      const tracker = follow?.tracker;
      const running = startServer({
        snapshot,
        port,
        host: opts.host,
        maxPageSize: opts.maxPageSize,
        verify: opts.verify,
        cacheDir,
        prepared,
        live: firstLive,
        owned: managed || follow !== null,
        followed: follow !== null || opts.changesFrom !== undefined,
        prune: !managed,
        ioTimeoutMs,
        threads,
        source: tracker !== undefined ? tracker.status : managed ? () => supervisedStatus : undefined,
        reusePort: opts.reusePort === true,
        listener: starting?.server,
        plugins: opts.demo === false ? [] : [demoPlugin(`/api/${resource}`)],
        logger,
        cors,
        apiKeys,
        resource,
        queryTimeoutMs,
        maxQueued,
        maxEventStreams,
        eventKeepAliveMs: fromEnv("EVENT_KEEPALIVE_MS", process.env.EVENT_KEEPALIVE_MS, integer(1, 3_600_000)),
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
      const stopWatching = dataFile !== undefined && opts.watch === true ? watchDataFile(dataFile, dataOptions, dataDir, running, logger) : () => {};
      let stopFollowing = () => {};
      if (follow !== null) stopFollowing = followSource({ snapshotId: () => running.engine().store.snapshotId, reload: (fetched, batches, entry) => running.reload(fetched, batches, entry.lsn ?? null), changes: running.changes }, follow);
      else if (opts.changesFrom !== undefined) {
        // a worker of a replica: its supervisor downloads the snapshots, it swaps each in with
        // its change batches and applies the batches after it
        const follower = followSupervised(
          { snapshotId: () => running.engine().store.snapshotId, changes: running.changes, reload: running.reload },
          { location: opts.changesFrom, pollSeconds: opts.poll, timeoutMs: ioTimeoutMs, threads, logger },
        );
        onAnnounce = follower.announce;
        if (announced !== null) follower.announce(announced);
        stopFollowing = follower.stop;
      }
      // Drain, then exit 0 (docs/api.md "HTTP envelope", Operations); a second signal waits for the same drain.
      shutdown = () => {
        stopWatching();
        stopFollowing();
        running.drain().finally(() => process.exit(0));
      };
      process.on("SIGINT", shutdown);
      process.on("SIGTERM", shutdown);
    });

  const generate = program
    .command("generate")
    .description("write deterministic realistic users to a file");
  generatorOptions(generate)
    .option("--format <format>", "ndjson, json or csv", "ndjson")
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
  const build = snapshot
    .command("build")
    .description(
      "build a snapshot of any users table from NDJSON, a JSON array, CSV, or a PostgreSQL table or query (records validated; the first bad one, or an input without records unless --allow-empty, stops the build); prints the columns decided, the fields left out and a warning per column that looks like a secret",
    )
    .argument("[input]", "data file (.ndjson/.jsonl, .json or .csv; .gz is gunzipped while read), or - for standard input; none with --from")
    .option("--from <url>", "read from PostgreSQL (postgres://user:password@host:port/database) instead of a file, with --table or --query")
    .option("--table <name>", "with --from: the table (schema-qualified or not) whose rows are the users")
    .option("--query <sql>", "with --from: a query whose rows are the users")
    .option("-o, --output <path>", "snapshot to write (atomically)", DEFAULT_DATA.path)
    .addOption(
      new Option("--format <format>", "input format (default: from the file name, without .gz, else from the content)").choices(["ndjson", "json", "csv"]),
    );
  tableOptions(build, "build");
  build.action(async (input: string | undefined, opts) => {
      if (opts.from !== undefined) {
        if (input !== undefined) throw new InvalidArgumentError("give an input file or --from, not both");
        if ((opts.table === undefined) === (opts.query === undefined)) throw new InvalidArgumentError("--from needs --table or --query (one of them)");
        if (opts.delimiter !== undefined) throw new InvalidArgumentError("--delimiter goes with a CSV input, not --from");
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
        const table = {
          schemaFile: opts.schema as string | undefined,
          key: opts.key as string | undefined,
          exclude: opts.exclude as string[] | undefined,
          allowEmpty: opts.allowEmpty === true,
          onDecided: (summary: TableSummary) => process.stderr.write(describeTable(summary)),
        };
        let r: Awaited<ReturnType<typeof buildSnapshotFromFile>>;
        if (opts.from !== undefined) {
          process.stderr.write(`reading ${opts.table !== undefined ? `table ${opts.table}` : "a query"} from PostgreSQL\n`);
          r = await buildSnapshotFromPostgres({ url: opts.from, table: opts.table, query: opts.query }, opts.output, onProgress, table);
        } else {
          r = await buildSnapshotFromFile(input as string, opts.output, onProgress, {
            format: opts.format as InputFormat | undefined,
            delimiter: opts.delimiter as string | undefined,
            onFormat: ({ file, format, gzip }) => process.stderr.write(`reading ${file} as ${FORMAT_NAMES[format]}${gzip ? " (gzip)" : ""}\n`),
            ...table,
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
  generatorOptions(snapshot.command("generate").description("build a snapshot of generated users directly (no intermediate file)"))
    .option("-o, --output <path>", "snapshot to write (atomically)", DEFAULT_DATA.path)
    .action((opts) => {
      const bar = progressBar("build");
      const r = buildSnapshotFromGenerator({ count: opts.count, seed: opts.seed, wide: opts.wide === true }, opts.output, (p) => bar.update(p));
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
      const published = new Date();
      let repaired = false;
      const manifest = await publishSnapshot(file, opts.to, published, {
        onRepair: ({ key, found }) => {
          repaired = true;
          process.stderr.write(`${key} at ${opts.to} ${found === null ? "was missing" : `did not match the file (${found.bytes} bytes, SHA-256 ${found.sha256})`}: uploading it again\n`);
        },
      });
      const c = manifest.current;
      if (c.publishedAt !== published.toISOString() && !repaired) {
        process.stderr.write(`unchanged: ${c.snapshotId} (${c.rows} rows) is already the current version at ${opts.to}, published ${c.publishedAt}\n`);
        return;
      }
      process.stderr.write(`published ${c.snapshotId} (${c.rows} rows, ${(c.bytes / 2 ** 20).toFixed(1)} MiB) to ${opts.to} in ${Math.round(performance.now() - t)} ms; ${manifest.previous.length} earlier version(s) kept\n`);
    });
  snapshot
    .command("follow")
    .description("publish a PostgreSQL table live: a first snapshot at a logical replication slot's consistent point, then every committed change as change batches for replicas (serve --source), compacted into a new snapshot from time to time (needs wal_level = logical)")
    .requiredOption("--from <url>", "postgres://user:pass@host:port/db (a role with REPLICATION, or the table's owner with it)")
    .requiredOption("--table <name>", "the table, schema.table or table")
    .requiredOption("--to <location>", "s3://bucket/prefix or a shared directory, as for snapshot publish")
    .option("--slot <name>", "the logical replication slot", "users_listing")
    .option("--publication <name>", "the publication of the table", "users_listing")
    .option("--batch-ms <ms>", "most time between a commit and its batch's publication", integer(1, 60_000), 500)
    .option("--compact-seconds <s>", "seconds between compactions of the batches published since the last snapshot into a new one, also when the table has gone quiet (0: never)", integer(0, 86_400 * 7), 600)
    .option("--key <column>", "the key column (default: the schema file's, else id)")
    .option("--exclude <columns>", "columns never published, a comma list (the publication lists the others)")
    .option("--schema <file>", "kinds of the columns it lists, and the key, as for snapshot build")
    .option("--work-dir <dir>", "where the publisher keeps its snapshot files (default: users-listing/follow/<location> in the user's cache directory, $XDG_CACHE_HOME or ~/.cache)")
    .option("--io-timeout <seconds>", "longest time a storage operation may go without progress", integer(1, 3600), DEFAULT_IO_TIMEOUT_MS / 1000)
    .action(async (opts) => {
      const logger = createLogger();
      const exclude: string[] = opts.exclude === undefined ? [] : String(opts.exclude).split(",").map((c: string) => c.trim()).filter(Boolean);
      const threads = createFileThreads();
      const workDir = resolve(opts.workDir ?? defaultLocationDir("follow", opts.to));
      const timeoutMs = opts.ioTimeout * 1000;
      const publisher = runPublisher({
        url: opts.from,
        table: opts.table,
        slot: opts.slot,
        publication: opts.publication,
        exclude,
        batchMs: opts.batchMs,
        compactSeconds: opts.compactSeconds,
        location: liveLocation(opts.to, workDir, threads, timeoutMs),
        maker: snapshotMaker({ url: opts.from, table: opts.table }, workDir, { key: opts.key, exclude, schemaFile: opts.schema }),
        logger,
        columns: async () => (await tableColumns(opts.from, opts.table)).filter((c) => !exclude.includes(c)),
      });
      const stop = () => {
        logger.info("stopping: publishing what is received, then exiting");
        publisher.stop().finally(() => {
          threads.close();
          process.exit(0);
        });
      };
      process.on("SIGTERM", stop);
      process.on("SIGINT", stop);
      await publisher.done;
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
