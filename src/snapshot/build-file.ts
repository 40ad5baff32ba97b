/**
 * `snapshot build`: input (a file of NDJSON, a JSON array or CSV, gzipped or not, or standard
 * input) → validated columns → store with every index → snapshot file, written atomically. A
 * failure at any step leaves the previous snapshot at the output path untouched; so does an
 * input without a record, which is refused rather than built into an empty snapshot that would
 * then be served.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { generateUsers } from "../generate/users.ts";
import { IngestError, type InputFormat, type RawColumns, inputName, readUsers } from "../ingest/read.ts";
import { type PostgresSource, readPostgres } from "../ingest/postgres.ts";
import { STATUS_VALUES, USER_COLUMN_SPECS, USER_KEY } from "../generate/record.ts";
import { appendString, finishByteColumn, growingByteColumn } from "../bits/byte-column.ts";
import { type BuildStep, buildStore, buildStoreParallel } from "../store/build.ts";
import type { ColumnInput, TableInput } from "../store/input.ts";
import type { Store } from "../store/types.ts";
import { writeSnapshot, writeSnapshotAsync } from "./write.ts";
import { decideColumns, readSchemaFile } from "./columns.ts";
import type { ColumnSpec } from "../schema/kinds.ts";

/** Progress of a build: a phase, and bytes done of bytes total while reading the input (total undefined for standard input). */
export interface BuildProgress {
  phase: "read" | "generate" | BuildStep | "write";
  done?: number;
  total?: number;
}

/** What a build produced and how long each part took. */
export interface BuildReport {
  rows: number;
  /** Snapshot size, in bytes. */
  bytes: number;
  snapshotId: string;
  /** Milliseconds reading and validating the input, building the indexes, writing. */
  readMs: number;
  indexMs: number;
  writeMs: number;
}

/** Options of {@link buildSnapshotFromFile}. */
export interface FileBuildOptions {
  /** The input's format, overriding detection (ingest/read.ts `detectFormat`). */
  format?: InputFormat;
  /**
   * Told, once the format is known and before any record is read: the input's name as in error
   * messages (`<stdin>` for `-`), its format, and whether it is gunzipped.
   */
  onFormat?: (info: { file: string; format: InputFormat; gzip: boolean }) => void;
  /**
   * A schema file (`--schema F`, docs/api.md "Columns beyond the four"): the kinds of the columns
   * it lists; the others are inferred. Read before the input, so a bad file fails fast.
   */
  schemaFile?: string;
  /** Told once the columns are decided: every column's id and kind, in schema order. */
  onSchema?: (columns: readonly ColumnSpec[]) => void;
}

/** The reason an input without a record is refused. */
export const NO_RECORDS_REASON = "no records (an empty dataset is not built)";

/** Writes a built store and completes the report. */
function writeBuilt(store: Store, output: string, readMs: number, t1: number, onProgress?: (p: BuildProgress) => void): BuildReport {
  const t2 = performance.now();
  onProgress?.({ phase: "write" });
  mkdirSync(dirname(output), { recursive: true });
  const { snapshotId, bytes } = writeSnapshot(output, store);
  const t3 = performance.now();
  return { rows: store.rowCount, bytes, snapshotId, readMs, indexMs: t2 - t1, writeMs: t3 - t2 };
}

/**
 * Builds a snapshot from a data file, a `.gz` file (gunzipped while read) or standard input
 * (`-`); see ingest/read.ts `readUsers` for the formats and the rules. The snapshot is written
 * with asynchronous writes (snapshot/write.ts `writeSnapshotAsync`), so that a signal handler
 * can remove its temporary file mid-write.
 * @param onProgress phases, and bytes read of the input's size while reading.
 * @param options `format` overrides detection; `onFormat` is told the format once known.
 * @throws IngestError (`file:line: reason`) for the first bad record or value (one that does not
 *   fit its column's kind), and `file:1: no records (an empty dataset is not built)` for an input
 *   without a record (empty, blank, `[]`, or a CSV header alone: line 1, the input's start, in
 *   every format); SchemaError for a bad schema file; file system errors.
 */
export async function buildSnapshotFromFile(
  input: string,
  output: string,
  onProgress?: (p: BuildProgress) => void,
  options: FileBuildOptions = {},
): Promise<BuildReport> {
  return buildFromColumns(
    async () => ({
      name: inputName(input),
      columns: await readUsers(input, (done, total) => onProgress?.({ phase: "read", done, total }), { format: options.format, onFormat: options.onFormat }),
      declared: [],
    }),
    output,
    onProgress,
    options,
  );
}

/**
 * Builds a snapshot from a PostgreSQL table or query (ingest/postgres.ts `readPostgres`): the
 * columns' types declare their kinds, and a `--schema` file overrides them for the columns it
 * lists. Otherwise as {@link buildSnapshotFromFile}: a failure leaves the output untouched.
 * @param onProgress `read` with rows read of the rows counted, then the build's phases
 * @throws IngestError (`postgres:<table>:<row>: reason`) for the first bad row, a duplicate id, a
 *   column of a type no kind holds, a connection or SQL error; as {@link buildSnapshotFromFile}
 */
export async function buildSnapshotFromPostgres(
  source: PostgresSource,
  output: string,
  onProgress?: (p: BuildProgress) => void,
  options: Pick<FileBuildOptions, "schemaFile" | "onSchema"> = {},
): Promise<BuildReport> {
  return buildFromColumns(async () => readPostgres(source, (done, total) => onProgress?.({ phase: "read", done, total })), output, onProgress, options);
}

/**
 * The build of every source: read (columns, the source's name, the kinds it declares), decide
 * the columns (a schema file first, then the source's declarations, then inference), build on
 * two cores, write asynchronously.
 */
async function buildFromColumns(
  read: () => Promise<{ name: string; columns: RawColumns; declared: ColumnSpec[] }>,
  output: string,
  onProgress: ((p: BuildProgress) => void) | undefined,
  options: Pick<FileBuildOptions, "schemaFile" | "onSchema">,
): Promise<BuildReport> {
  const t0 = performance.now();
  let t1 = t0;
  const fromFile = options.schemaFile === undefined ? [] : readSchemaFile(options.schemaFile);
  // Both string columns at once, on the machine's two cores. The columns are handed over
  // without a name here, so nothing holds them once the build has taken what it needs.
  const store = await buildStoreParallel(
    await read().then(({ name, columns, declared }) => {
      if (columns.ids.length === 0) throw new IngestError(name, 1, NO_RECORDS_REASON);
      const listed = new Set(fromFile.map((c) => c.id));
      const extra = decideColumns(name, columns, [...fromFile, ...declared.filter((c) => !listed.has(c.id))]);
      const table = tableOfReadColumns(columns, extra);
      options.onSchema?.(table.columns.map((c) => c.spec));
      t1 = performance.now();
      return table;
    }),
    (step) => onProgress?.({ phase: step }),
  );
  const t2 = performance.now();
  onProgress?.({ phase: "write" });
  mkdirSync(dirname(output), { recursive: true });
  const { snapshotId, bytes } = await writeSnapshotAsync(output, store);
  const t3 = performance.now();
  return { rows: store.rowCount, bytes, snapshotId, readMs: t1 - t0, indexMs: t2 - t1, writeMs: t3 - t2 };
}

/**
 * The table of what the readers produce: the key `id` (number), `name` and `email` (text),
 * `status` (an enum of its two values), then the other columns as decided.
 */
function tableOfReadColumns(columns: RawColumns, extra: ColumnInput[]): TableInput {
  const n = columns.ids.length;
  const seed: ColumnInput[] = [
    { spec: USER_COLUMN_SPECS[0], values: { kind: "number", values: columns.ids, nulls: 0 } },
    { spec: USER_COLUMN_SPECS[1], values: { kind: "text", strings: columns.names, isNull: new Uint8Array(n), nulls: 0 } },
    { spec: USER_COLUMN_SPECS[2], values: { kind: "text", strings: columns.emails, isNull: new Uint8Array(n), nulls: 0 } },
    { spec: USER_COLUMN_SPECS[3], values: { kind: "enum", codes: columns.statusCodes.map((c) => c + 1), values: [...STATUS_VALUES], nulls: 0 } },
  ];
  return { rows: n, columns: [...seed, ...extra], key: USER_KEY };
}

/**
 * Builds a snapshot of generated users (src/generate/users.ts), without an intermediate file,
 * on this thread: the embedded default dataset, test and benchmark datasets.
 */
export function buildSnapshotFromGenerator(
  options: { count: number; seed: number },
  output: string,
  onProgress?: (p: BuildProgress) => void,
): BuildReport {
  const t0 = performance.now();
  const n = options.count;
  const ids = new Float64Array(n);
  const codes = new Uint8Array(n);
  const names = growingByteColumn(n, n * 16);
  const emails = growingByteColumn(n, n * 24);
  let i = 0;
  for (const user of generateUsers(options)) {
    ids[i] = user.id;
    appendString(names, user.name);
    appendString(emails, user.email);
    codes[i] = STATUS_VALUES.indexOf(user.status) + 1;
    i++;
    if ((i & 0xffff) === 0) onProgress?.({ phase: "generate", done: i, total: n });
  }
  const none = new Uint8Array(n);
  const table: TableInput = {
    rows: n,
    key: USER_KEY,
    columns: [
      { spec: USER_COLUMN_SPECS[0], values: { kind: "number", values: ids, nulls: 0 } },
      { spec: USER_COLUMN_SPECS[1], values: { kind: "text", strings: finishByteColumn(names), isNull: none, nulls: 0 } },
      { spec: USER_COLUMN_SPECS[2], values: { kind: "text", strings: finishByteColumn(emails), isNull: none, nulls: 0 } },
      { spec: USER_COLUMN_SPECS[3], values: { kind: "enum", codes, values: [...STATUS_VALUES], nulls: 0 } },
    ],
  };
  const t1 = performance.now();
  const store = buildStore(table, (step) => onProgress?.({ phase: step }));
  return writeBuilt(store, output, t1 - t0, t1, onProgress);
}
