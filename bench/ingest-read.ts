/**
 * How long does `snapshot build` take to read a data file — parse every record, decide the
 * columns (the key, the kinds) and convert them — for the seed-shaped users table and for the
 * wide one (`generate --wide`: 11 fields, a nested object among them)? Each build runs through
 * the CLI, which prints its phases (read, index, write); this reports the read phase. With
 * `--baseline DIR` (another checkout, e.g. `git worktree add /tmp/before HEAD~3`, with its own
 * node_modules or a link to these) the two CLIs take turns on the same file, so before and after
 * are measured in one sitting. Each tree's fastest run and median are reported (on a busy
 * machine the fastest is the least disturbed), and the ratio of the fastest runs.
 *
 *   bun bench/ingest-read.ts [--rows 1m,10m] [--shapes seed,wide] [--runs 3] [--baseline DIR]
 *
 * The files are generated once into bench/.cache/ (`users-<rows>.ndjson`, `wide-<rows>.ndjson`;
 * 1 GB and 3 GB at 10M). Take `flock /tmp/bench.lock` around it on a shared machine. Prints one
 * line per build and a table; nothing is written to bench/results.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseSize, sizeLabel } from "./datasets.ts";

const ROOT = resolve(import.meta.dir, "..");
const CACHE = join(ROOT, "bench", ".cache");
const { values } = parseArgs({
  options: { rows: { type: "string", default: "1m,10m" }, shapes: { type: "string", default: "seed,wide" }, runs: { type: "string", default: "3" }, baseline: { type: "string" } },
});
const sizes = (values.rows as string).split(",").map(parseSize);
const shapes = (values.shapes as string).split(",") as ("seed" | "wide")[];
const runs = Number(values.runs);
const say = (line: string) => console.log(`[ingest-read] ${line}`);

/** The cached NDJSON file of `rows` generated users of `shape`, generated when absent. */
function dataset(shape: "seed" | "wide", rows: number): string {
  mkdirSync(CACHE, { recursive: true });
  const path = join(CACHE, `${shape === "wide" ? "wide" : "users"}-${sizeLabel(rows)}.ndjson`);
  if (!existsSync(path)) {
    say(`generating ${path}`);
    const args = [process.execPath, "src/cli.ts", "generate", "--count", String(rows), "--format", "ndjson", "--out", path, ...(shape === "wide" ? ["--wide"] : [])];
    const g = Bun.spawnSync(args, { cwd: ROOT, stderr: "inherit" });
    if (g.exitCode !== 0) process.exit(1);
  }
  return path;
}

/** Reads `path` once to the end, so that every timed build finds it in the page cache (the first would otherwise pay for the disk). */
async function warm(path: string): Promise<void> {
  const reader = Bun.file(path).stream().getReader();
  while (!(await reader.read()).done) {
    // each chunk discarded
  }
}

/** The phases of one build of `input` by the CLI of `root`, in ms, from its report line. */
function build(root: string, input: string, output: string): { read: number; index: number; write: number } {
  const r = Bun.spawnSync([process.execPath, join(root, "src", "cli.ts"), "snapshot", "build", input, "-o", output], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const text = r.stderr.toString();
  const m = /\(read (\d+) ms, index (\d+) ms, write (\d+) ms\)/.exec(text);
  if (r.exitCode !== 0 || m === null) throw new Error(`build by ${root} failed:\n${text}`);
  return { read: Number(m[1]), index: Number(m[2]), write: Number(m[3]) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const trees = [{ name: "this tree", root: ROOT }, ...(values.baseline ? [{ name: "baseline", root: resolve(values.baseline as string) }] : [])];
const dir = mkdtempSync(join(tmpdir(), "ingest-read-"));
const table: string[] = ["| shape | rows | " + trees.map((t) => `${t.name}: read ms, fastest (median)`).join(" | ") + (trees.length > 1 ? " | ratio of the fastest |" : " |"), `|---|---|${trees.map(() => "---|").join("")}${trees.length > 1 ? "---|" : ""}`];
try {
  for (const rows of sizes) {
    for (const shape of shapes) {
      const input = dataset(shape, rows);
      await warm(input);
      const reads = trees.map(() => [] as number[]);
      for (let run = 0; run < runs; run++) {
        // the trees take turns, so that a busy moment falls on both
        for (const [i, tree] of trees.entries()) {
          const phases = build(tree.root, input, join(dir, `out-${i}.snap`));
          reads[i].push(phases.read);
          say(`${shape} ${sizeLabel(rows)} ${tree.name} run ${run + 1}: read ${phases.read} ms, index ${phases.index} ms, write ${phases.write} ms`);
        }
      }
      const fastest = reads.map((r) => Math.min(...r));
      const cells = reads.map((r, i) => `${fastest[i]} (${median(r)})`);
      table.push(`| ${shape} | ${sizeLabel(rows)} | ${cells.join(" | ")}${trees.length > 1 ? ` | ${(fastest[0] / fastest[1]).toFixed(2)} |` : " |"}`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(table.join("\n"));
