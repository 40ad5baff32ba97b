/**
 * Users from PostgreSQL (`snapshot build --from postgres://… --table T | --query SQL`): the rows
 * of a table or a query, streamed by `COPY (SELECT row_to_json(t)::text …) TO STDOUT (FORMAT
 * binary)` (never the whole result in memory: the stream is read ahead of the parser, at most
 * {@link READ_AHEAD_BYTES} queued, so the server keeps rendering rows while a chunk is parsed),
 * each row rendered by the server as JSON and validated exactly as an NDJSON record is
 * (records.ts `addJsonRecord`: every column a field, none special; numbers kept exactly).
 * COPY rather than a cursor: the server streams without a round trip per batch, and the binary
 * format carries each row's text as it is (length-prefixed, no escapes), so the rows of a chunk
 * are decoded as one string and cut at NUL bytes, which neither JSON text nor PostgreSQL text
 * can hold.
 * The columns' PostgreSQL types decide their kinds (docs/api.md "Any users table: from your data to columns"):
 * integer, bigint, numeric, real, double → number; text, varchar, char, uuid, name → text (a
 * uuid key is a text key: Supabase's `auth.users`);
 * enum types → enum with their declared order; date → date; timestamp, timestamptz →
 * datetime; boolean → boolean; json, jsonb → json. Other types are refused with the column's
 * name (cast them in `--query`). The client is the `postgres` package.
 */
import type { Readable } from "node:stream";
import postgres from "postgres";
import type { ColumnKind, ColumnSpec } from "../schema/kinds.ts";
import { duplicateKeyReason, rawKeyDuplicate } from "./key.ts";
import { ColumnsBuilder, IngestError, type RawColumns, addJsonRecord, parseErrorText, unknownExcludeReason } from "./records.ts";

/** Where the rows come from: a table (optionally schema-qualified) or a query. */
export interface PostgresSource {
  /** A connection URL, `postgres://user:password@host:port/database`. */
  url: string;
  table?: string;
  query?: string;
  /**
   * An exported snapshot (`pg_export_snapshot()`, or a logical replication slot's, created with
   * it): the rows are read in a REPEATABLE READ transaction set to it, so they are exactly the
   * commits it saw (docs/live-replicas.md §7, the first snapshot).
   */
  snapshot?: string;
}

/** What a PostgreSQL read gives the build: the columns, and the kinds the types declare. */
export interface PostgresRead {
  columns: RawColumns;
  /** A spec per kept column, in result order (what `--schema` would list). */
  declared: ColumnSpec[];
  /** The source's name in error messages: `postgres:<table>` or `postgres:query`. */
  name: string;
}

/** The signature that opens a binary COPY stream (PostgreSQL docs, "COPY", Binary Format). */
const COPY_SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");

/** Rows between progress reports. */
const PROGRESS_ROWS = 5_000;

/**
 * Bytes of the COPY stream read ahead of the parser at most: above it the socket is paused,
 * until the parser takes what is queued. Reading ahead lets PostgreSQL render the next
 * rows (on another core) while this thread parses the last ones; with the stream's own 16 KiB
 * buffer the two took turns (bench/pg-build.ts, the 1M-row wide table: read 6.0–6.1 s before,
 * 4.9–5.5 s after).
 */
export const READ_AHEAD_BYTES = 64 << 20;

/**
 * The chunks of `stream`, read ahead in flowing mode: everything that arrived since the last
 * chunk was taken is handed over as one buffer (bounded by {@link READ_AHEAD_BYTES} plus the
 * last chunk read). Ends with the stream (`end`, or `close` before it: the parser then finds the
 * COPY truncated); throws the stream's error.
 * @param highBytes pause the stream when this many bytes are queued (default READ_AHEAD_BYTES)
 */
export async function* readAhead(stream: Readable, highBytes: number = READ_AHEAD_BYTES): AsyncGenerator<Uint8Array> {
  const queue: Uint8Array[] = [];
  let queued = 0;
  let ended = false;
  let failure: { error: unknown } | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const onData = (chunk: Uint8Array) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued > highBytes) stream.pause();
    notify();
  };
  const onEnd = () => {
    ended = true;
    notify();
  };
  const onError = (error: unknown) => {
    failure = { error };
    notify();
  };
  stream.on("data", onData);
  stream.on("end", onEnd);
  stream.on("close", onEnd);
  stream.on("error", onError);
  try {
    for (;;) {
      if (queue.length > 0) {
        const parts = queue.splice(0);
        const length = queued;
        queued = 0;
        if (stream.isPaused()) stream.resume();
        yield parts.length === 1 ? parts[0] : Buffer.concat(parts, length);
        continue;
      }
      if (failure !== null) throw (failure as { error: unknown }).error;
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    stream.off("data", onData);
    stream.off("end", onEnd);
    stream.off("close", onEnd);
    stream.off("error", onError);
  }
}

/**
 * Lets the connection of an ended COPY stream read again. postgres.js (3.4.9) pauses its socket
 * when the stream refuses a chunk (its buffer, 16 KiB, full: the chunks of one socket read
 * arrive before the stream flows) and resumes it only from the stream's `read()`; when the
 * COPY's end comes in the same socket read, the stream ends with the socket paused, no `read()`
 * follows, and the connection's next answer — the COMMIT of the transaction a read at an
 * exported snapshot runs in — is never read: the build waited forever (one read in ten of a
 * 70 kB table). Calling the stream's `read()` once it has ended resumes the socket.
 */
function resumeAfterCopy(stream: Readable): void {
  (stream as unknown as { _read(size: number): void })._read(0);
}

/**
 * Parses a binary COPY stream of one non-null text column per tuple (PostgreSQL docs, "COPY",
 * Binary Format: an 11-byte signature, a 32-bit flags field, a 32-bit header extension length
 * and its bytes; each tuple a 16-bit field count (here 1) and a 32-bit length before the field's
 * bytes; a 16-bit -1 at the end).
 * `onRows` gets each chunk's whole tuples as one string, the fields joined by NUL (U+0000), and
 * how many there are.
 * @throws Error for a stream that is not such a COPY (signature, field count, a NULL field, a
 *   truncated tuple, bytes after the trailer) and for invalid UTF-8 in a field
 */
export async function readCopyText(chunks: AsyncIterable<Uint8Array>, onRows: (text: string, count: number) => void): Promise<void> {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let pending: Buffer = Buffer.alloc(0);
  let headerDone = false;
  let ended = false;
  // the joined fields of one chunk, grown as needed
  let joined = Buffer.allocUnsafe(1 << 20);
  for await (const chunk of chunks) {
    const data = pending.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([pending, chunk]);
    let p = 0;
    if (!headerDone) {
      if (data.length < 19) {
        pending = Buffer.from(data);
        continue;
      }
      if (!data.subarray(0, 11).equals(COPY_SIGNATURE)) throw new Error("the COPY stream does not start with the binary signature");
      const extension = data.readUInt32BE(15);
      if (data.length < 19 + extension) {
        pending = Buffer.from(data);
        continue;
      }
      p = 19 + extension;
      headerDone = true;
    }
    if (ended && p < data.length) throw new Error("bytes after the COPY trailer");
    let out = 0;
    let count = 0;
    while (p + 2 <= data.length) {
      const fields = data.readInt16BE(p);
      if (fields === -1) {
        ended = true;
        p += 2;
        if (p < data.length) throw new Error("bytes after the COPY trailer");
        break;
      }
      if (fields !== 1) throw new Error(`a COPY tuple of ${fields} fields (1 expected)`);
      if (p + 6 > data.length) break;
      const length = data.readInt32BE(p + 2);
      if (length < 0) throw new Error("a NULL row in the COPY stream");
      if (p + 6 + length > data.length) break;
      if (out + length + 1 > joined.length) {
        const grown = Buffer.allocUnsafe(Math.max(joined.length * 2, out + length + 1));
        joined.copy(grown, 0, 0, out);
        joined = grown;
      }
      if (count > 0) joined[out++] = 0;
      out += data.copy(joined, out, p + 6, p + 6 + length);
      count++;
      p += 6 + length;
    }
    if (count > 0) {
      let text: string;
      try {
        text = decoder.decode(joined.subarray(0, out));
      } catch {
        throw new Error("invalid UTF-8 in a row of the COPY stream (is the database's encoding SQL_ASCII?)");
      }
      onRows(text, count);
    }
    pending = p < data.length ? Buffer.from(data.subarray(p)) : Buffer.alloc(0);
  }
  if (!headerDone || !ended) throw new Error("the COPY stream ended early");
}


/** A table name as a quoted identifier: `schema.table` → `"schema"."table"`. */
export function quoteTable(table: string): string {
  return table
    .split(".")
    .map((part) => `"${part.replaceAll('"', '""')}"`)
    .join(".");
}

/** A column name as a quoted identifier. */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Options of {@link readPostgres}. */
export interface PostgresReadOptions {
  /** Columns left out: not selected at all, so their values never leave the database; each must be a column of the result. */
  exclude?: readonly string[];
  /** The key column: a bad row gives way to a duplicate of its value on an earlier row. */
  key?: string;
  /**
   * The kind of a column of built-in type `oid` (kinds/registry.ts `kindOfPostgresType`), or
   * undefined for a type no kind holds (refused by name); enum types are enums.
   */
  kindOfType: (oid: number) => ColumnKind | undefined;
}

/**
 * Reads every row of `source` into raw columns, one per column of the result in its order (none
 * special), and the kinds their types declare. Columns left out (`options.exclude`) are not
 * selected: a table's columns are read from the catalog and the query sent is
 * `SELECT <the other columns> FROM <table>` (so a role that may not read a left-out column can
 * still build); a query's is `SELECT <the other columns> FROM (<query>)`.
 * @param onProgress rows read so far and the rows the source holds (counted first)
 * @returns the columns (n rows, possibly 0: a table without rows still gives its columns), the
 *   declared specs of the kept columns in result order, the source's name
 * @throws IngestError (`postgres:<table>:<row>: reason`, rows counted from 1) for the first bad
 *   row (as for an NDJSON record: a value over the limit, a number a double would round…) or a
 *   duplicate key on an earlier row than it; `postgres:<table>:1: …` for an excluded name that
 *   is not a column, a column of a type no kind holds, a column name that is not a column id,
 *   too many columns, and a connection or SQL error (its message)
 */
export async function readPostgres(source: PostgresSource, onProgress: ((rows: number, total: number) => void) | undefined, options: PostgresReadOptions): Promise<PostgresRead> {
  if ((source.table === undefined) === (source.query === undefined)) throw new Error("readPostgres: give a table or a query, not both");
  const name = source.table !== undefined ? `postgres:${source.table}` : "postgres:query";
  const sql = postgres(source.url, { max: 1, onnotice: () => {}, connection: { TimeZone: "UTC", application_name: "users-listing snapshot build" } });
  const failed = (error: unknown): never => {
    if (error instanceof IngestError) throw error;
    throw new IngestError(name, 1, `PostgreSQL: ${parseErrorText(error)}`);
  };
  // seconds `sql.end` waits for a query in progress: none after a refused row
  let endTimeout = 5;
  try {
    if (source.snapshot === undefined) return await readWith(sql, source, name, failed, options, onProgress, () => {
      endTimeout = 0;
    });
    const snapshot = source.snapshot;
    if (!/^[0-9A-Fa-f-]+$/.test(snapshot)) throw new Error(`readPostgres: ${JSON.stringify(snapshot)} is not an exported snapshot's name`);
    return (await sql
      .begin("isolation level repeatable read read only", async (tx) => {
        await tx.unsafe(`SET TRANSACTION SNAPSHOT '${snapshot}'`);
        return readWith(tx as unknown as postgres.Sql, source, name, failed, options, onProgress, () => {
          endTimeout = 0;
        });
      })
      .catch(failed)) as PostgresRead;
  } finally {
    await sql.end({ timeout: endTimeout });
  }
}

/**
 * {@link readPostgres}'s reading, through `sql` (the connection, or a transaction on it).
 * @param failed turns an error into the read's IngestError (and throws it)
 * @param refused called when a row was refused mid-COPY (the connection is then closed at once)
 */
async function readWith(
  sql: postgres.Sql,
  source: PostgresSource,
  name: string,
  failed: (error: unknown) => never,
  options: PostgresReadOptions,
  onProgress: ((rows: number, total: number) => void) | undefined,
  refused: () => void,
): Promise<PostgresRead> {
  {
    // A table's columns come from the catalog, so that a column left out is never named in a
    // query (a role without the privilege to read it can build); a query's from its result.
    const all: { name: string; type: number }[] =
      source.table !== undefined
        ? (
            await sql<{ name: string; type: number }[]>`
              SELECT attname AS name, atttypid::int AS type FROM pg_attribute
              WHERE attrelid = ${quoteTable(source.table)}::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`.catch(failed)
          ).map((c) => ({ name: c.name, type: c.type }))
        : (await sql.unsafe(`SELECT * FROM (${source.query as string}) AS t LIMIT 0`).catch(failed)).columns.map((c) => ({ name: c.name, type: c.type }));
    const names = all.map((c) => c.name);
    const excluded = new Set(options.exclude ?? []);
    for (const field of excluded) {
      if (!names.includes(field)) throw new IngestError(name, 1, unknownExcludeReason(field, names));
    }
    const kept = all.filter((c) => !excluded.has(c.name));
    const list = kept.map((c) => quoteIdentifier(c.name)).join(", ");
    const from = source.table !== undefined ? `SELECT ${list} FROM ${quoteTable(source.table)}` : `SELECT ${list} FROM (${source.query as string}) AS s`;
    const oids = kept.map((c) => c.type);
    const types = await sql<{ oid: number; typname: string; typtype: string; labels: string[] | null }[]>`
      SELECT t.oid::int AS oid, t.typname, t.typtype,
        (SELECT array_agg(e.enumlabel ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid) AS labels
      FROM pg_type t WHERE t.oid = ANY(${oids})`.catch(failed);
    const typeOf = new Map(types.map((t) => [t.oid, t]));
    const declared: ColumnSpec[] = [];
    const builder = new ColumnsBuilder(name, { exclude: excluded });
    for (const column of kept) {
      const type = typeOf.get(column.type);
      if (type?.typtype === "e") declared.push({ id: column.name, kind: "enum", values: type.labels ?? [] });
      else if (options.kindOfType(column.type) !== undefined) declared.push({ id: column.name, kind: options.kindOfType(column.type) as ColumnKind });
      else throw new IngestError(name, 1, `column "${column.name}" has type ${type?.typname ?? column.type}, which no column kind holds; cast it in --query (to text, say), or leave it out with --exclude`);
      // every kept column, in the result's order, even when no row comes
      builder.column(column.name, 1);
    }
    for (const field of names) if (excluded.has(field)) builder.column(field, 1);
    const [{ count }] = await sql.unsafe(`SELECT count(*)::float8 AS count FROM (${from}) AS t`).catch(failed);
    const total = Number(count);
    let row = 0;
    let reported = 0;
    let copy: Awaited<ReturnType<ReturnType<typeof sql.unsafe>["readable"]>> | null = null;
    try {
      copy = await sql.unsafe(`COPY (SELECT row_to_json(t)::text FROM (${from}) AS t) TO STDOUT (FORMAT binary)`).readable();
      await readCopyText(readAhead(copy), (text, count) => {
        let start = 0;
        for (let k = 0; k < count; k++) {
          let end = k === count - 1 ? text.length : text.indexOf("\0", start);
          if (end < 0) end = text.length;
          const record = text.slice(start, end);
          row++;
          addJsonRecord(name, builder, JSON.parse(record), row, record);
          start = end + 1;
        }
        if (row - reported >= PROGRESS_ROWS) {
          reported = row;
          onProgress?.(row, total);
        }
      });
      onProgress?.(row, total);
      resumeAfterCopy(copy);
    } catch (error) {
      // stop reading: the connection, mid-COPY, is closed at once by the caller
      copy?.destroy();
      refused();
      // the first bad row in row order: a duplicate key on an earlier row wins
      const key = options.key === undefined ? undefined : builder.lookup(options.key);
      const found = key ? rawKeyDuplicate(key, builder.rows) : null;
      if (found !== null && (!(error instanceof IngestError) || builder.lines[found.duplicate.index] < error.line)) {
        throw new IngestError(name, builder.lines[found.duplicate.index], duplicateKeyReason(found.value, builder.lines[found.duplicate.firstIndex]));
      }
      failed(error);
    }
    return { columns: builder.finish(), declared, name };
  }
}
