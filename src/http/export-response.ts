/**
 * The answers of the facets and export routes (docs/api.md "Facets", "Export"): a facets JSON
 * body with the data headers, and an export streamed batch by batch with back-pressure (a
 * batch is written only when the client has taken the previous one) that stops when the client
 * goes away.
 */
import type { Logger } from "pino";
import type { ExportCursor } from "../engine/export.ts";
import type { FacetsAnswer } from "../engine/facets.ts";
import type { ExportFormat } from "../query/export.ts";
import { type ExportBuffer, csvHeader, rowsCsv, rowsNdjson } from "../store/rows-export.ts";
import type { Schema } from "../schema/kinds.ts";
import type { Projection } from "../store/record-fields.ts";
import type { ExtraRecords, Store } from "../store/types.ts";
import type { Coding } from "./compress.ts";
import { JSON_TYPE, bytesResponse } from "./responses.ts";

const encoder = new TextEncoder();

/** Bytes of export chunks made between two minor garbage collections (see exportResponse). */
const COLLECT_EVERY_BYTES = 64 * 2 ** 20;

/**
 * The facets 200: `{facets, total}` as JSON with the data headers (`ETag`, `X-Snapshot-Id`,
 * `Cache-Control: no-cache`, `Vary: Accept-Encoding`), compressed as any data body.
 */
export function facetsResponse(answer: FacetsAnswer, etag: string, snapshotId: string, coding: Coding | null): Response {
  const headers = { "content-type": JSON_TYPE, etag, "x-snapshot-id": snapshotId, "cache-control": "no-cache", vary: "Accept-Encoding" };
  return bytesResponse(encoder.encode(JSON.stringify(answer)), 200, headers, coding);
}

/** What an export's rows are written as (see {@link exportResponse}). */
export interface ExportShape {
  /** The id `X-Snapshot-Id` shows (a live replica's `<snapshotId>@<LSN>`). */
  version: string;
  /** The schema the client sees: the CSV header's columns. */
  schema: Schema;
  /** The members each record keeps (an access role's), or null for every one. */
  projection: Projection | null;
  /** The records of rows beyond the store's (a live replica's changed rows), or null. */
  extra: ExtraRecords | null;
}

/** Content types of the export formats. */
const EXPORT_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8; header=present",
  ndjson: "application/x-ndjson",
};

/**
 * The export 200: every row of `cursor` as CSV (a header line first) or NDJSON, streamed: each
 * pull of the body writes the next batch, so at most a batch or two is held whatever the row
 * count; a client that stops reading stops the pulls, and one that disconnects cancels the
 * stream (no further batch is made). `Content-Disposition: attachment; filename="<resource>-<snapshotId>.<ext>"`
 * (docs/api.md "Export", "Resource name").
 * Compressed with gzip when the client accepts it (a streaming compressor; the body's length
 * is unknown up front either way).
 * @param gzip true when the client accepts gzip
 * @param logger where a stopped export is noted (rows written of the total)
 * @param resource the resource name (resource.ts), the file name's first part
 * @param shape what the rows are written as: the version `X-Snapshot-Id` shows and the file is
 *   named after (engine/execute.ts `versionId`; an LSN's slash becomes `-`), the schema the
 *   client sees (the CSV header's columns), the projection of the records onto it (an access
 *   role's; null for every column), and the records of rows beyond the store's (a live
 *   replica's changed rows: engine/execute.ts `extraRecords`); default the store's snapshot id
 *   and schema, every column, none
 */
export function exportResponse(
  store: Store,
  cursor: ExportCursor,
  format: ExportFormat,
  etag: string,
  gzip: boolean,
  logger: Logger,
  resource: string,
  shape: ExportShape = { version: store.snapshotId, schema: store.schema, projection: null, extra: null },
): Response {
  const { version, projection, extra } = shape;
  const header: Uint8Array | null = format === "csv" ? csvHeader(shape.schema) : null;
  const headers: Record<string, string> = {
    "content-type": EXPORT_TYPES[format],
    "content-disposition": `attachment; filename="${resource}-${version.replace("/", "-")}.${format}"`,
    etag,
    "x-snapshot-id": version,
    "cache-control": "no-cache",
    vary: "Accept-Encoding",
  };
  let written = 0;
  const stop = () => {
    logger.info({ rows: written, total: cursor.total }, "export stopped: the client went away");
  };
  // Each batch is written into one reused buffer and copied out at its exact size: the only
  // array a batch leaves behind is the chunk the socket takes.
  const buffer: ExportBuffer = { bytes: new Uint8Array(1 << 20) };
  let pending = header;
  let sinceCollection = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pending !== null) {
          controller.enqueue(pending);
          pending = null;
          return;
        }
        const rows = cursor.next();
        if (rows === null) {
          controller.close();
          return;
        }
        written += rows.length;
        const chunk = (format === "csv" ? rowsCsv(store, rows, buffer, extra, projection) : rowsNdjson(store, rows, buffer, extra, projection)).slice();
        // The runtime does not collect the chunks' arrays promptly while a producer runs flat out
        // (measured: ~240 MiB of them held per 1M rows): a full collection every 64 MiB bounds it (a minor one did not).
        sinceCollection += chunk.length;
        if (sinceCollection >= COLLECT_EVERY_BYTES) {
          sinceCollection = 0;
          Bun.gc(true);
        }
        controller.enqueue(chunk);
      },
      cancel: stop,
    },
    { highWaterMark: 1 },
  );
  if (!gzip) return new Response(stream, { headers });
  headers["content-encoding"] = "gzip";
  return new Response(stream.pipeThrough(new CompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>), { headers });
}
