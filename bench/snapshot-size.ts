/**
 * Question: what does each structure of a snapshot cost on disk (docs/snapshot-format.md)?
 * Reads the header of each file given (any format version this build or an older one wrote: the
 * header alone, not the sections) and prints MiB per structure: the records, each column's parts
 * but its trigrams, each column's trigram lists, the search index's lists across columns per n,
 * and each column's own 1- and 2-gram lists (version 8 on), then the file's total.
 *
 *   bun bench/snapshot-size.ts FILE.snap [FILE2.snap …]
 */
import { readFileSync } from "node:fs";
import { ELEMENT_BYTES, PREFIX_BYTES, type SectionEntry, headerPackr } from "../src/snapshot/format.ts";

/** The structure a section belongs to, by its name (format.ts section names). */
function structureOf(name: string): string {
  if (name.startsWith("records.") || name === "recordOffsets" || name === "bodyScratch") return "records";
  if (name.startsWith("partition.")) return "partition";
  let m = /^search\.(\d)\./.exec(name);
  if (m !== null) return `search index across columns, ${m[1]}-grams`;
  m = /^col\.(.*)\.search\.(\d)\.[a-zA-Z]+$/.exec(name);
  if (m !== null) return `search index per column, ${m[2]}-grams`;
  m = /^col\.(.*)\.trigrams\.[a-zA-Z]+$/.exec(name);
  if (m !== null) return "columns' trigram lists (3-grams per column)";
  return "columns' other parts (orders, ranks, folded values)";
}

for (const path of process.argv.slice(2)) {
  const file = readFileSync(path);
  const view = new DataView(file.buffer, file.byteOffset);
  const length = view.getUint32(8, true);
  const header = headerPackr.unpack(file.subarray(PREFIX_BYTES, PREFIX_BYTES + length)) as { formatVersion: number; sections: SectionEntry[] };
  const bytes = new Map<string, number>();
  for (const s of header.sections) {
    const key = structureOf(s.name);
    bytes.set(key, (bytes.get(key) ?? 0) + s.length * ELEMENT_BYTES[s.type]);
  }
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  console.log(`${path} (format version ${header.formatVersion}): ${mib(file.length)} MiB`);
  for (const [key, b] of [...bytes].sort((a, c) => c[1] - a[1])) console.log(`  ${key}: ${mib(b)} MiB`);
}
