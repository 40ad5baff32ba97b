/**
 * A snapshot of generated users (table.ts `generatedTable`), without an intermediate file: the
 * embedded default dataset (`serve` without a snapshot), `snapshot generate`, and the test and
 * benchmark datasets. The generator is a data source like a file or a PostgreSQL table; the
 * snapshot builder takes its table as it takes theirs (snapshot/build-file.ts).
 */
import { type BuildProgress, type BuildReport, buildSnapshotFromTable } from "../snapshot/build-file.ts";
import { generatedTable } from "./table.ts";

/**
 * Builds and writes a snapshot of generated users, on this thread.
 * @param options rows, seed, and `wide` for the wide table's seven columns
 * @param onProgress `generate` with rows generated of `options.count`, then the build's phases
 * @throws RangeError for bad options (users.ts `generateUsers`); file system errors
 */
export function buildSnapshotFromGenerator(options: { count: number; seed: number; wide?: boolean }, output: string, onProgress?: (p: BuildProgress) => void): BuildReport {
  const t0 = performance.now();
  const table = generatedTable(options, (rows) => onProgress?.({ phase: "generate", done: rows, total: options.count }));
  return buildSnapshotFromTable(table, output, performance.now() - t0, onProgress);
}
