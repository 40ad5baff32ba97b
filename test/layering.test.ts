/**
 * The source folders form layers: no folder imports (directly or through others) from a folder
 * that imports it. Bit-level primitives (src/bits) sit below the store and the engine; column
 * kinds (src/kinds) below the store, the query parsers and the engine.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const SRC = join(import.meta.dir, "../src");

/** Folder (first path segment under src/, or the file name for top-level files) → folders it imports from. */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of readdirSync(SRC, { recursive: true }) as string[]) {
    if (!file.endsWith(".ts")) continue;
    const from = file.split("/")[0];
    const text = readFileSync(join(SRC, file), "utf8");
    for (const m of text.matchAll(/^(?:import|export)[^;]*?from "(\.[^"]+)"/gms)) {
      const target = relative(SRC, normalize(join(SRC, dirname(file), m[1])));
      const to = target.split("/")[0];
      if (to === from || to.startsWith("..")) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      graph.get(from)?.set(to, `${file} imports ${m[1]}`);
    }
  }
  return graph;
}

describe("source layering", () => {
  test("no folder depends on a folder that depends on it", () => {
    const graph = folderGraph();
    const cycles: string[] = [];
    for (const [a, targets] of graph) {
      for (const [b, why] of targets) {
        // is a reachable from b?
        const seen = new Set<string>([b]);
        const stack = [b];
        while (stack.length > 0) {
          const x = stack.pop() as string;
          for (const y of graph.get(x)?.keys() ?? []) {
            if (!seen.has(y)) {
              seen.add(y);
              stack.push(y);
            }
          }
        }
        if (seen.has(a)) cycles.push(`${a} → ${b} (${why}) and back`);
      }
    }
    expect(cycles).toEqual([]);
  });

  test("the graph is what the layering says: bits import nothing of ours; kinds nothing above them", () => {
    const graph = folderGraph();
    expect([...(graph.get("bits")?.keys() ?? [])]).toEqual([]);
    for (const upper of ["store", "engine", "http", "query", "snapshot"]) expect(graph.get("kinds")?.has(upper) ?? false).toBe(false);
  });

  // Each pair: a folder, and a folder it must not import (directly). The reason is in the comment.
  const FORBIDDEN: [string, string, string][] = [
    // a source's raw column is a shared type: it lives in src/schema, below both the readers and the kinds
    ["kinds", "ingest", "the kinds convert what the readers read, through src/schema/raw-column.ts"],
    // access control compiles a role's filter into a predicate (src/query) and keeps views in an LRU (src/bits): no engine internals
    ["access", "engine", "a role's view is a predicate and a projection; the engine runs it as any request's filter"],
    // the generator is a data source for the command line, as a file or a table is; the builder takes any source's table
    ["snapshot", "generate", "the snapshot builder takes a table from any source (src/generate/snapshot.ts builds the generator's)"],
  ];
  for (const [from, to, why] of FORBIDDEN) {
    test(`${from} does not import ${to}: ${why}`, () => {
      expect(folderGraph().get(from)?.get(to) ?? null).toBeNull();
    });
  }
});
