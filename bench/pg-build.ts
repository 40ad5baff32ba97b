/**
 * `snapshot build --from postgres://…` at scale: the wide users table (src/generate/wide.ts,
 * cached in bench/.cache/wide-<rows>.ndjson) loaded into a throwaway PostgreSQL (Debian's, in a
 * temporary directory: test/support/postgres.ts), then built into a snapshot through the CLI,
 * `--runs` times, wall time and the build's own phases (read, index, write) and max RSS each.
 * With `--baseline DIR` (another checkout, e.g. `git worktree add /tmp/before HEAD~1`) the two
 * CLIs take turns on the same server, so before and after are measured in one sitting.
 *
 *   bun bench/pg-build.ts [--rows 1m] [--runs 2] [--baseline DIR]
 *
 * Prints one line per build and a summary; nothing is written to bench/results (the figures go
 * into the notes and docs/operations.md by hand).
 */
import { createReadStream, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { ROLE_VALUES } from "../src/generate/wide.ts";
import { startPostgres } from "../test/support/postgres.ts";
import { parseSize, sizeLabel } from "./datasets.ts";

const ROOT = resolve(import.meta.dir, "..");
const CACHE = join(ROOT, "bench", ".cache");
const { values } = parseArgs({ options: { rows: { type: "string", default: "1m" }, runs: { type: "string", default: "2" }, baseline: { type: "string" } } });
const rows = parseSize(values.rows as string);
const label = sizeLabel(rows);
const runs = Number(values.runs);
const say = (line: string) => console.log(`[pg-build] ${line}`);

mkdirSync(CACHE, { recursive: true });
const ndjson = join(CACHE, `wide-${label}.ndjson`);
if (!existsSync(ndjson)) {
  say(`generating ${ndjson}`);
  const g = Bun.spawnSync([process.execPath, "src/cli.ts", "generate", "--wide", "--count", String(rows), "--format", "ndjson", "--out", ndjson], { cwd: ROOT, stderr: "inherit" });
  if (g.exitCode !== 0) process.exit(1);
}

const pg = startPostgres();
const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
const dir = mkdtempSync(join(tmpdir(), "users-pg-build-"));
try {
  let t = performance.now();
  // The NDJSON lines go in unchanged as one jsonb each (CSV mode with quote and delimiter
  // characters that never occur, so no escape is interpreted), then become typed rows.
  await sql.unsafe(`
    CREATE TYPE role AS ENUM (${ROLE_VALUES.map((v) => `'${v}'`).join(", ")});
    CREATE TABLE wide (id bigint PRIMARY KEY, name text NOT NULL, email text NOT NULL, status text NOT NULL,
      created_at timestamptz NOT NULL, birthday date, role role NOT NULL, age int, verified boolean NOT NULL, notes text, prefs jsonb);
    CREATE UNLOGGED TABLE raw (doc jsonb);`).simple();
  const writable = await sql.unsafe(`COPY raw FROM STDIN WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')`).writable();
  await pipeline(createReadStream(ndjson), writable);
  await sql.unsafe(`INSERT INTO wide SELECT (jsonb_populate_record(NULL::wide, doc)).* FROM raw; DROP TABLE raw;`).simple();
  await sql.unsafe("VACUUM ANALYZE wide");
  const [{ count }] = await sql`SELECT count(*)::int AS count FROM wide`;
  say(`loaded ${count} rows into PostgreSQL in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  if (count !== rows) throw new Error(`expected ${rows} rows`);

  const clis: { name: string; root: string }[] = [{ name: "this tree", root: ROOT }];
  if (values.baseline !== undefined) clis.unshift({ name: "baseline", root: resolve(values.baseline) });
  const walls = new Map<string, number[]>();
  for (let run = 0; run < runs; run++) {
    for (const cli of clis) {
      const out = join(dir, "wide.snap");
      t = performance.now();
      const child = Bun.spawn(["/usr/bin/time", "-f", "maxrss_kb=%M", process.execPath, join(cli.root, "src", "cli.ts"), "snapshot", "build", "--from", pg.url, "--table", "wide", "-o", out], {
        cwd: cli.root,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
      const code = await child.exited;
      const wall = (performance.now() - t) / 1000;
      if (code !== 0) throw new Error(`${cli.name}: build failed (${code}): ${stderr}`);
      const phases = (stdout + stderr).split("\n").filter((l) => /read|index|write|rows|maxrss/.test(l) && !l.includes("\r"));
      say(`${cli.name} run ${run + 1}: ${wall.toFixed(1)} s wall · ${phases.map((l) => l.trim()).join(" · ")}`);
      walls.set(cli.name, [...(walls.get(cli.name) ?? []), wall]);
      rmSync(out, { force: true });
    }
  }
  for (const [name, w] of walls) say(`${name}: best ${Math.min(...w).toFixed(1)} s, runs ${w.map((x) => x.toFixed(1)).join(", ")} (${label} wide rows)`);
} finally {
  await sql.end({ timeout: 5 });
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
