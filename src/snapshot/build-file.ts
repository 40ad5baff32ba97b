/**
 * `snapshot build`: input (a file of NDJSON, a JSON array or CSV, gzipped or not, standard input,
 * or a PostgreSQL table or query) → raw columns → the decided table (snapshot/columns.ts: the
 * key, kinds, fields left out) → store with every index → snapshot file, written atomically. A
 * failure at any step leaves the previous snapshot at the output path untouched; so does an
 * input without a record, which is refused (unless an empty table is allowed) rather than built
 * into an empty snapshot that would then be served.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { type InputFormat, inputName, readUsers } from "../ingest/read.ts";
import { type PostgresSource, readPostgres } from "../ingest/postgres.ts";
import { type BuildStep, buildStore, buildStoreParallel } from "../store/build.ts";
import type { TableInput } from "../store/input.ts";
import type { Store } from "../store/types.ts";
import { writeSnapshot, writeSnapshotAsync } from "./write.ts";
import { type ColumnOptions, type Decision, checkColumnOptions, chooseKey, decideColumns, readSchemaFile } from "./columns.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import { kindOfPostgresType } from "../kinds/registry.ts";

export { NO_RECORDS_REASON } from "./columns.ts";

/** Progress of a build: a phase, and bytes done of bytes total while reading the input (total undefined for standard input). */
export interface BuildProgress {
  phase: "read" | "generate" | BuildStep | "write";
  done?: number;
  total?: number;
}

/** What a build decided about its columns, for its output: every column with its kind, the key, the fields left out, the warnings. */
export interface TableSummary {
  /** Rows in the table. */
  rows: number;
  /** Every column in the table's order, with its kind (an enum with its values). */
  columns: ColumnSpec[];
  /** The key column's id. */
  key: string;
  /** The fields left out (`--exclude`), in the input's order. */
  excluded: string[];
  /** One line each: a kept column that looks like a secret (snapshot/columns.ts `secretWarning`). */
  warnings: string[];
}

/** What a build produced and how long each part took. */
export interface BuildReport extends TableSummary {
  /** Snapshot size, in bytes. */
  bytes: number;
  snapshotId: string;
  /** Milliseconds reading, validating and converting the input; building the indexes; writing. */
  readMs: number;
  indexMs: number;
  writeMs: number;
}

/** What a build is told about its columns (snapshot/columns.ts `ColumnOptions`), with the schema file by path. */
export interface TableOptions extends Omit<ColumnOptions, "schema"> {
  /**
   * A schema file (`--schema F`, docs/api.md "Any users table: from your data to columns"): the key and the kinds of the
   * columns it lists; the others are inferred. Read before the input, so a bad file fails fast.
   */
  schemaFile?: string;
  /** Told once the table is decided, before the indexes are built: its columns, key, fields left out, warnings. */
  onDecided?: (summary: TableSummary) => void;
}

/** Options of {@link buildSnapshotFromFile} and {@link readTableFromFile}. */
export interface FileBuildOptions extends TableOptions {
  /** The input's format, overriding detection (ingest/read.ts `detectFormat`). */
  format?: InputFormat;
  /**
   * Told, once the format is known and before any record is read: the input's name as in error
   * messages (`<stdin>` for `-`), its format, and whether it is gunzipped.
   */
  onFormat?: (info: { file: string; format: InputFormat; gzip: boolean }) => void;
  /** The CSV field delimiter, one character (default `,`). */
  delimiter?: string;
}

/** The summary of a decision. */
function summaryOf(decision: Decision): TableSummary {
  const { table, excluded, warnings } = decision;
  return { rows: table.rows, columns: table.columns.map((c) => c.spec), key: table.key, excluded, warnings };
}

/** The column options of a build, its schema file read (so that a bad one fails before the input is read). */
function columnOptions(options: TableOptions): ColumnOptions {
  const resolved: ColumnOptions = { key: options.key, exclude: options.exclude, allowEmpty: options.allowEmpty };
  if (options.schemaFile !== undefined) resolved.schema = readSchemaFile(options.schemaFile);
  checkColumnOptions(resolved);
  return resolved;
}

/**
 * Reads a data file, a `.gz` file (gunzipped while read) or standard input (`-`) into the table a
 * store build takes (see ingest/read.ts `readUsers` for the formats, snapshot/columns.ts
 * `decideColumns` for the decisions).
 * @param onProgress bytes read of the input's size while reading
 * @returns the decision: the table, the fields left out, the warnings
 * @throws InputError when the input cannot be read (missing, a directory…); IngestError
 *   (`file:line: reason`) for the first bad record or value, a bad key value, an input without
 *   records (`file:1: no records …`) unless `allowEmpty`; SchemaError for a bad schema file, a
 *   key, schema column or excluded name that is not a field of the input, an excluded key
 */
export async function readTableFromFile(input: string, options: FileBuildOptions = {}, onProgress?: (p: BuildProgress) => void): Promise<Decision> {
  const resolved = columnOptions(options);
  const raw = await readUsers(input, (done, total) => onProgress?.({ phase: "read", done, total }), {
    format: options.format,
    onFormat: options.onFormat,
    exclude: resolved.exclude,
    key: chooseKey(resolved).key,
    delimiter: options.delimiter,
  });
  return decideColumns(inputName(input), raw, resolved);
}

/**
 * Reads a PostgreSQL table or query (ingest/postgres.ts `readPostgres`) into the table a store
 * build takes: the columns' types declare their kinds, and a schema file overrides them for the
 * columns it lists; excluded columns are not selected at all.
 * @param onProgress `read` with rows read of the rows counted
 * @throws IngestError (`postgres:<table>:<row>: reason`) for the first bad row, a bad key value,
 *   a column of a type no kind holds, an excluded name that is not a column, a connection or SQL
 *   error; as {@link readTableFromFile}
 */
export async function readTableFromPostgres(source: PostgresSource, options: TableOptions = {}, onProgress?: (p: BuildProgress) => void): Promise<Decision> {
  const resolved = columnOptions(options);
  const read = await readPostgres(source, (done, total) => onProgress?.({ phase: "read", done, total }), { exclude: resolved.exclude, key: chooseKey(resolved).key, kindOfType: kindOfPostgresType });
  return decideColumns(read.name, read.columns, resolved, { declared: read.declared });
}

/** Writes a built store and completes the report. */
function writeBuilt(store: Store, output: string, readMs: number, t1: number, onProgress?: (p: BuildProgress) => void): Omit<BuildReport, keyof TableSummary> & { rows: number } {
  const t2 = performance.now();
  onProgress?.({ phase: "write" });
  mkdirSync(dirname(output), { recursive: true });
  const { snapshotId, bytes } = writeSnapshot(output, store);
  const t3 = performance.now();
  return { rows: store.rowCount, bytes, snapshotId, readMs, indexMs: t2 - t1, writeMs: t3 - t2 };
}

/**
 * Builds a snapshot from a data file, a `.gz` file (gunzipped while read) or standard input
 * (`-`) ({@link readTableFromFile}). The snapshot is written with asynchronous writes
 * (snapshot/write.ts `writeSnapshotAsync`), so that a signal handler can remove its temporary
 * file mid-write.
 * @param onProgress phases, and bytes read of the input's size while reading.
 * @param options format, schema file, key, excluded fields, empty tables, CSV delimiter; told the
 *   format and the decided table
 * @throws as {@link readTableFromFile}; Error when the store cannot hold the table; file system errors
 */
export async function buildSnapshotFromFile(input: string, output: string, onProgress?: (p: BuildProgress) => void, options: FileBuildOptions = {}): Promise<BuildReport> {
  return buildFromTable(() => readTableFromFile(input, options, onProgress), output, onProgress, options);
}

/**
 * Builds a snapshot from a PostgreSQL table or query ({@link readTableFromPostgres}). Otherwise
 * as {@link buildSnapshotFromFile}: a failure leaves the output untouched.
 * @param onProgress `read` with rows read of the rows counted, then the build's phases
 * @throws as {@link readTableFromPostgres}; as {@link buildSnapshotFromFile}
 */
export async function buildSnapshotFromPostgres(source: PostgresSource, output: string, onProgress?: (p: BuildProgress) => void, options: TableOptions = {}): Promise<BuildReport> {
  return buildFromTable(() => readTableFromPostgres(source, options, onProgress), output, onProgress, options);
}

/** The build of every source: read and decide the table, build the store on two cores, write asynchronously. */
async function buildFromTable(
  read: () => Promise<Decision>,
  output: string,
  onProgress: ((p: BuildProgress) => void) | undefined,
  options: Pick<TableOptions, "onDecided">,
): Promise<BuildReport> {
  const t0 = performance.now();
  let t1 = t0;
  let summary: TableSummary | undefined;
  // The table is handed over without a name here, so nothing holds it once the build has taken
  // what it needs.
  const store = await buildStoreParallel(
    await read().then((decision) => {
      summary = summaryOf(decision);
      options.onDecided?.(summary);
      t1 = performance.now();
      return decision.table;
    }),
    (step) => onProgress?.({ phase: step }),
  );
  const t2 = performance.now();
  onProgress?.({ phase: "write" });
  mkdirSync(dirname(output), { recursive: true });
  const { snapshotId, bytes } = await writeSnapshotAsync(output, store);
  const t3 = performance.now();
  return { ...(summary as TableSummary), rows: store.rowCount, bytes, snapshotId, readMs: t1 - t0, indexMs: t2 - t1, writeMs: t3 - t2 };
}

/**
 * Builds a snapshot from a table already in memory (a source that makes its table itself, such
 * as the generator of the default data: generate/snapshot.ts), on this thread, and writes it.
 * @param table the table (its arrays are shared with the store, not copied)
 * @param readMs milliseconds the source took to make the table, for the report
 * @throws RangeError as store/build.ts `buildStore`; file system errors
 */
export function buildSnapshotFromTable(table: TableInput, output: string, readMs: number, onProgress?: (p: BuildProgress) => void): BuildReport {
  const summary: TableSummary = { rows: table.rows, columns: table.columns.map((c) => c.spec), key: table.key, excluded: [], warnings: [] };
  const t1 = performance.now();
  const store = buildStore(table, (step) => onProgress?.({ phase: step }));
  return { ...summary, ...writeBuilt(store, output, readMs, t1, onProgress) };
}
