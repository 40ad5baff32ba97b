/**
 * The README's "Layout" is true to the tree, and the source's citations of docs/api.md point at
 * sections that exist: every path the layout names exists, every folder and top-level file of
 * src/ is named, and every `docs/api.md "<section>"` in a source file is a heading of docs/api.md.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The paths the Layout block names, as written (`src/server.ts, cli.ts` names src/server.ts and src/cli.ts). */
function layoutPaths(): string[] {
  const start = README.indexOf("## Layout");
  const block = /```\n([\s\S]*?)```/.exec(README.slice(start))?.[1] ?? "";
  const paths: string[] = [];
  for (const line of block.split("\n")) {
    const named = /^(\S+(?:, \S+)*)\s{2,}/.exec(line)?.[1];
    if (named === undefined) continue;
    const [first, ...rest] = named.split(", ");
    const dir = first.includes("/") ? first.slice(0, first.lastIndexOf("/") + 1) : "";
    paths.push(first, ...rest.map((name) => dir + name));
  }
  return paths;
}

describe("README Layout", () => {
  test("names only paths that exist", () => {
    const paths = layoutPaths();
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });

  test("names every folder and top-level file of src/", () => {
    const named = new Set(layoutPaths().map((p) => p.replace(/\/$/, "")));
    const entries = readdirSync(join(ROOT, "src"), { withFileTypes: true }).map((e) => `src/${e.name}`);
    expect(entries.filter((e) => !named.has(e))).toEqual([]);
  });
});

describe("docs/api.md citations in src/", () => {
  test("each names a section of docs/api.md", () => {
    const headings = new Set(
      readFileSync(join(ROOT, "docs", "api.md"), "utf8")
        .split("\n")
        .filter((line) => /^#{1,6} /.test(line))
        .map((line) => line.replace(/^#+ /, "").trim()),
    );
    const missing: string[] = [];
    for (const file of readdirSync(join(ROOT, "src"), { recursive: true }) as string[]) {
      if (!file.endsWith(".ts")) continue;
      const text = readFileSync(join(ROOT, "src", file), "utf8");
      for (const m of text.matchAll(/docs\/api\.md,? "([^"]+)"/g)) {
        // a citation may wrap across comment lines
        const section = m[1].replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, " ");
        if (!headings.has(section)) missing.push(`src/${file}: "${section}"`);
      }
    }
    expect(missing).toEqual([]);
  });
});
