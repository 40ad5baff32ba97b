#!/usr/bin/env bun
/**
 * The one command-line entry: `serve`, `generate`, `snapshot build`, `snapshot info`.
 * Run `bun src/cli.ts --help` (or the compiled binary with --help).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { SingleBar } from "cli-progress";
import { Command, InvalidArgumentError } from "commander";
import type { Logger } from "pino";
import { demoPlugin } from "./demo/plugin.ts";
import { type UserFileFormat, writeUsers } from "./generate/users.ts";
import { DEFAULT_MAX_PAGE_SIZE } from "./http/app.ts";
import { createLogger } from "./log.ts";
import { type BuildProgress, buildSnapshotFromFile, buildSnapshotFromGenerator } from "./snapshot/build-file.ts";
import { SnapshotError, loadSnapshot } from "./snapshot/load.ts";
import { startServer } from "./server.ts";

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
      const pct = p.done !== undefined && p.total ? Math.floor((100 * p.done) / p.total) : 100;
      bar.update(pct, { phase: p.phase.padEnd(8) });
    },
    stop() {
      if (started) bar.stop();
    },
  };
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

/** Builds the command tree. */
export function createCli(): Command {
  const program = new Command()
    .name("users-listing")
    .description("Server-side listing service for data tables: GET and POST /api/users over a columnar snapshot.")
    .showHelpAfterError();

  program
    .command("serve")
    .description(`serve /api/users; without --snapshot, serves ${DEFAULT_DATA.path}, building ${DEFAULT_DATA.count} generated users there first if absent or refused`)
    .option("--snapshot <path>", "snapshot file to serve")
    .option("--port <port>", "port (env PORT; 0 picks a free one)", integer(0, 65535), process.env.PORT ? Number(process.env.PORT) : 3000)
    .option("--host <host>", "host to bind (env HOST)", process.env.HOST ?? "127.0.0.1")
    .option("--max-page-size <rows>", "largest pageSize / row window", integer(1, 1_000_000), DEFAULT_MAX_PAGE_SIZE)
    .option("--no-verify", "skip section checksums at start-up (structure is still checked)")
    .option("--reuse-port", "let several processes share the port (SO_REUSEPORT)")
    .option("--no-demo", "do not serve the demo page (AG Grid and TanStack Table clients) at /")
    .action((opts) => {
      const logger = createLogger();
      let snapshot: string = opts.snapshot;
      if (snapshot === undefined) {
        snapshot = resolve(DEFAULT_DATA.path);
        ensureGeneratedSnapshot(snapshot, DEFAULT_DATA, logger);
      }
      const running = startServer({
        snapshot,
        port: opts.port,
        host: opts.host,
        maxPageSize: opts.maxPageSize,
        verify: opts.verify,
        reusePort: opts.reusePort === true,
        plugins: opts.demo === false ? [] : [demoPlugin()],
        logger,
      });
      const shutdown = () => {
        running.stop().finally(() => process.exit(0));
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
    .requiredOption("--out <path>", "output file (written atomically)")
    .action(async (opts) => {
      if (!["ndjson", "json", "csv"].includes(opts.format)) throw new InvalidArgumentError("--format must be ndjson, json or csv");
      const bar = progressBar("generate");
      await writeUsers(opts.out, { count: opts.count, seed: opts.seed, format: opts.format as UserFileFormat }, (rows) =>
        bar.update({ phase: "generate", done: rows, total: opts.count }),
      );
      bar.stop();
      process.stderr.write(`wrote ${opts.count} users to ${opts.out}\n`);
    });

  const snapshot = program.command("snapshot").description("build or inspect snapshot files");
  snapshot
    .command("build")
    .description("build a snapshot from NDJSON, a JSON array or CSV (records validated; the first bad one stops the build)")
    .argument("<input>", "data file (.ndjson/.jsonl, .json or .csv)")
    .option("-o, --output <path>", "snapshot to write (atomically)", DEFAULT_DATA.path)
    .action(async (input: string, opts) => {
      const bar = progressBar("build");
      try {
        const r = await buildSnapshotFromFile(input, opts.output, (p) => bar.update(p));
        bar.stop();
        report(`built ${opts.output}`, r);
      } finally {
        bar.stop();
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
