/**
 * The README's configuration table against the command line's own definitions: every option of
 * `serve` (but the hidden ones a supervisor passes its workers) is in the table's flag column,
 * every environment variable an option's help names is in its environment column, and every
 * variable the table lists is read by the source — so neither can drift from the other.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createCli } from "../../src/cli.ts";

const ROOT = join(import.meta.dir, "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The rows of the "## Configuration" table: flag and environment cells. */
function configurationRows(): { flags: string; env: string }[] {
  const start = README.indexOf("## Configuration");
  const end = README.indexOf("\n## ", start + 1);
  const rows = README.slice(start, end)
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("| setting") && !l.startsWith("|---"));
  return rows.map((row) => {
    const cells = row.split(" | ");
    return { flags: cells[1] ?? "", env: cells[2] ?? "" };
  });
}

describe("the README's configuration table", () => {
  const rows = configurationRows();
  const serve = createCli().commands.find((c) => c.name() === "serve");
  const options = (serve?.options ?? []).filter((o) => !(o as { hidden?: boolean }).hidden);

  test("lists every serve option", () => {
    expect(options.length).toBeGreaterThan(10);
    const flagCells = rows.map((r) => r.flags).join(" ");
    const missing = options.map((o) => o.long as string).filter((long) => !flagCells.includes(`\`${long}\``));
    expect(missing).toEqual([]);
  });

  test("lists every environment variable an option names, and each variable it lists is read by the source", () => {
    const envCells = rows.map((r) => r.env).join(" ");
    const named = options.flatMap((o) => [...(o.description ?? "").matchAll(/\benv ([A-Z_]+)/g)].map((m) => m[1]));
    expect(named.filter((v) => !envCells.includes(`\`${v}\``))).toEqual([]);
    const listed = [...envCells.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]);
    expect(listed.length).toBeGreaterThan(5);
    const source = (readdirSync(join(ROOT, "src"), { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts"))
      .map((f) => readFileSync(join(ROOT, "src", f), "utf8"))
      .join("\n");
    expect(listed.filter((v) => !source.includes(`env.${v}`) && !source.includes(`env["${v}"]`))).toEqual([]);
  });

  test("states the defaults the options have", () => {
    const poll = options.find((o) => o.long === "--poll");
    expect(poll?.defaultValue).toBe(10);
    expect(README).toContain("| seconds between polls of the location's manifest (fractions allowed; a live table's replica: `0.25`) | `--poll` | | 10 |");
    // a replica's files outside the working tree (snapshot/private-copy.ts defaultLocationDir)
    expect(README).toContain("with `--source`, `users-listing/replica/<location>` in the user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache`)");
    const maxPage = options.find((o) => o.long === "--max-page-size");
    expect(README).toContain(`| largest page size / row window | \`--max-page-size\` | | ${maxPage?.defaultValue} |`);
  });
});
