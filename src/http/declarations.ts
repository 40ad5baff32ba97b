/**
 * What each route declares through Elysia for the OpenAPI document at /openapi/json (docs/api.md
 * "The OpenAPI document and the docs UI"): TypeBox schemas (`t` from elysia) for its query
 * parameters, request headers, JSON body and its answers per status, and the named models they
 * refer to. @elysiajs/openapi's generator (`toOpenAPISchema`, app.ts `declaredPaths`) turns
 * them into the document's operations, parameters, request bodies, responses and
 * `components.schemas`; nothing here is an OpenAPI operation written by hand.
 *
 * The declarations are the document's only: the served routes are declared without them, so
 * Elysia validates nothing at run time and every error stays the service's own problem+json
 * (service/pipeline.ts parses against the role's schema).
 *
 * What describes the served snapshot comes from its schema and the kind modules: the record
 * (`User`: each column's `jsonSchema`), the sortable, filterable and facetable column ids, a
 * `filter[<col>]` parameter per column (its kind's `getFormDoc`), and AG Grid's filter models
 * (filter-models.ts, from the operator registry). Nullable values are written the 3.1 way
 * (`type: [..., "null"]` or `oneOf` with `{type: "null"}`). Request models state their
 * defaults in words, not with `default`: generators such as openapi-typescript make a property
 * with a default required, which would force clients to send what they may leave out.
 *
 * Limits come from the modules that enforce them (src/query, src/kinds/operators.ts, body.ts).
 */
import { t } from "elysia";
import { type IntegerOptions, Kind, type TObject, type TSchema, Type } from "@sinclair/typebox";
import { filterModelSchemas } from "./filter-models.ts";
import { MAX_FILTER_LENGTH } from "../kinds/operators.ts";
import { KINDS } from "../kinds/registry.ts";
import { MAX_LISTED_ERRORS } from "../query/errors.ts";
import { DEFAULT_FACET_LIMIT, MAX_FACET_COLUMNS, MAX_FACET_LIMIT } from "../query/facets.ts";
import { DEFAULT_PAGE_SIZE } from "../query/get.ts";
import { DEFAULT_BLOCK_SIZE } from "../query/post.ts";
import { COLUMN_ID, COLUMN_KINDS, type Schema } from "../schema/kinds.ts";
import { MAX_BODY_BYTES } from "../service/body.ts";
import { IO_REASONS } from "../files/errors.ts";
import type { DocContext } from "./routes.ts";

/** A `$ref` to a named model inside a model (plain JSON Schema). */
const schema = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A TypeBox reference to a named model (`components.schemas`), for a route's declarations. */
const model = (name: string, description?: string) => t.Ref(`#/components/schemas/${name}`, description === undefined ? {} : { description });

/**
 * An integer (TypeBox's own `Integer`: elysia's `t.Integer` is its query coercion, a union with
 * a numeric string whose `default` is 0, which would misstate the defaults in the document).
 */
const integer = (options: IntegerOptions) => Type.Integer(options);

/** The largest POST body, as the document says it. */
const BODY_LIMIT = `${MAX_BODY_BYTES / 1024} KiB`;

/** The properties of the body of POST on the listing (AG Grid's getRows request), shared with explain's body. */
function rowsRequestProperties(s: Schema) {
  return {
    startRow: { type: "integer", minimum: 0, description: "First row of the window (0-based); default 0." },
    endRow: { type: "integer", minimum: 0, description: `End of the window, exclusive; at least startRow; default startRow + ${DEFAULT_BLOCK_SIZE}. Not clamped to the total.` },
    sortModel: {
      type: "array",
      items: schema("SortModelItem"),
      description: `Sort keys by priority; default \`[]\` (${s.key} order). Rows still tied after the last key are ordered by ${s.key}.`,
    },
    filterModel: { oneOf: [schema("FilterModel"), { type: "null" }], description: "`null` or `{}`: no filter." },
    quickFilter: schema("QuickFilter"),
  };
}

/**
 * The record (`User`) of a schema as a TypeBox object: every column, in schema order, required,
 * its value schema its kind's (src/kinds `jsonSchema`: nullable but for the key).
 * @param schemaPath the path of the schema route, named in the description
 */
function recordModel(s: Schema, schemaPath: string): TSchema {
  const columns = Object.fromEntries(s.columns.map((c) => [c.id, t.Unsafe<unknown>(KINDS[c.kind].jsonSchema(c, c.id === s.key))]));
  return t.Object(columns, { description: `One record, every column in schema order (GET ${schemaPath} lists them); \`${s.key}\` is the key.` });
}

/**
 * What `/healthz` and `/readyz` both say of the snapshot being served (docs/api.md "Operations"),
 * beside their own `status`.
 */
const served = {
  rows: { type: "integer", minimum: 0, description: "Rows in the snapshot being served." },
  snapshotId: { type: "string", description: "Id of the snapshot being served." },
  createdAt: { type: "string", format: "date-time", description: "When the snapshot being served was built." },
  ageSeconds: { type: "integer", minimum: 0, description: "Seconds since it was built." },
  source: schema("SourceStatus"),
};

/**
 * The named schemas (`components.schemas`) for the served snapshot: the record (`User`) has
 * every column, each nullable by its kind but the key (src/kinds: `jsonSchema`); the column
 * ids and the filter models name the schema's columns.
 */
function componentSchemas({ schema: s, paths }: DocContext) {
  const ids = s.columns.map((c) => c.id);
  const sortable = s.columns.filter((c) => KINDS[c.kind].sortable).map((c) => c.id);
  const filterable = s.columns.filter((c) => KINDS[c.kind].filterTypes.length > 0).map((c) => c.id);
  return {
    ColumnId: {
      type: "string",
      enum: sortable,
      description: `A sortable column id (every column but json ones). Any other id in a sort or filter is a 400 that lists the columns: ${ids.join(", ")}.`,
    },
    SortDirection: { type: "string", enum: ["asc", "desc"] },
    User: recordModel(s, paths.schema),
    ColumnKind: { type: "string", enum: [...COLUMN_KINDS] },
    Column: {
      type: "object",
      required: ["id", "kind"],
      properties: {
        id: { type: "string", pattern: COLUMN_ID.source },
        kind: schema("ColumnKind"),
        values: { type: "array", items: { type: "string" }, description: "An enum's values, in their sort order." },
      },
    },
    SnapshotSchema: {
      type: "object",
      description: "The served snapshot's columns in schema order, its key and partition columns, its row count and id. For a credential's role that sees some rows or columns: its columns, its row count, no partition column and no id.",
      required: ["columns", "key", "partition", "rows"],
      properties: {
        columns: { type: "array", items: schema("Column") },
        key: { type: "string", description: "The key column's id: unique, never null; every order's ties are broken by it." },
        partition: { type: ["string", "null"], description: "The enum column the rows are partitioned by (filters on it are slices), or null." },
        rows: { type: "integer", minimum: 0 },
        snapshotId: { type: "string" },
      },
    },
    FieldError: {
      type: "object",
      description: "One bad query parameter (GET: `parameter`) or body field (POST: `pointer`) and what is wrong with it.",
      required: ["detail"],
      properties: {
        parameter: { type: "string", description: "The query parameter's name as sent, e.g. `filter[id]`." },
        pointer: { type: "string", description: "A JSON pointer (RFC 6901) into the body, e.g. `/filterModel/id/filter`; empty for the whole body." },
        detail: { type: "string" },
      },
    },
    Problem: {
      type: "object",
      description: "An error, as application/problem+json (RFC 9457). Never a partial page, never a stack trace.",
      required: ["type", "title", "status", "detail"],
      properties: {
        type: { type: "string", description: "A relative URI naming the kind of problem, e.g. `/problems/bad-parameter`." },
        title: { type: "string", description: "The same for every problem of a type." },
        status: { type: "integer", description: "The HTTP status." },
        detail: { type: "string", description: "What went wrong in this request, for a person." },
        errors: {
          type: "array",
          maxItems: MAX_LISTED_ERRORS,
          items: schema("FieldError"),
          description: `Each bad parameter or body field, in request order; at most ${MAX_LISTED_ERRORS}.`,
        },
        moreErrors: { type: "integer", minimum: 1, description: `Bad fields left out of \`errors\` (present only when there were more than ${MAX_LISTED_ERRORS}).` },
        requestId: { type: "string", description: "500 only: the id under which the error was logged." },
        state: { type: "string", enum: ["starting", "draining"], description: "503 only: why the server is not ready." },
        code: {
          type: "string",
          enum: ["query_timeout", "overloaded"],
          description: "503 only, on the data routes: the query ran past the server's query timeout, or too many expensive queries were waiting. Retry after `Retry-After` seconds.",
        },
      },
    },
    GetUsersResponse: {
      type: "object",
      description: "A page: shape A (`data`, `total`, `page`, `pageSize`) and shape B (`data`, `pagination`, `meta`) in one object.",
      required: ["data", "total", "page", "pageSize", "pagination", "meta"],
      properties: {
        data: { type: "array", items: schema("User") },
        total: { type: "integer", minimum: 0, description: "Rows matching the filters (all pages)." },
        page: { type: "integer", minimum: 1 },
        pageSize: { type: "integer", minimum: 1 },
        pagination: {
          type: "object",
          required: ["page", "pageSize", "total", "totalPages"],
          properties: {
            page: { type: "integer", minimum: 1 },
            pageSize: { type: "integer", minimum: 1 },
            total: { type: "integer", minimum: 0 },
            totalPages: { type: "integer", minimum: 0, description: "ceil(total / pageSize); 0 when total is 0." },
          },
        },
        meta: {
          type: "object",
          description: "The sort, filters and search applied, normalized; empty when none.",
          properties: {
            sortBy: schema("ColumnId"),
            sortOrder: schema("SortDirection"),
            filters: {
              type: "object",
              description: "Each applied filter's value, normalized (enum values as declared, numbers canonical); empty values left out.",
              properties: Object.fromEntries(filterable.map((c) => [c, { type: "string" }])),
              additionalProperties: false,
            },
            q: { type: "string", description: "The global search applied, its terms joined by single spaces." },
          },
        },
      },
    },
    SortModelItem: {
      type: "object",
      description: "One sort key of AG Grid's sortModel; array order is priority.",
      required: ["colId", "sort"],
      properties: {
        colId: schema("ColumnId"),
        sort: schema("SortDirection"),
        type: {
          type: "string",
          enum: ["default", "absolute"],
          description: "Default `default`. `absolute` orders a number column by its absolute value (ties: the negative first when ascending); other kinds ignore it.",
        },
      },
    },
    ...filterModelSchemas(s),
    PostUsersRequest: {
      type: "object",
      description:
        "AG Grid Infinite Row Model's getRows request. Other fields (`context`, …) are ignored, except that non-empty `rowGroupCols`, `groupKeys`, `pivotCols`, `valueCols` or `pivotMode: true` are a 400: grouping and pivoting are not served.",
      properties: rowsRequestProperties(s),
    },
    QuickFilter: {
      type: ["string", "null"],
      maxLength: MAX_FILTER_LENGTH,
      description:
        "The global search (AG Grid's quick filter text): split on white space; every term, folded, must be contained in the folded string of the key, a text column or an enum column. ANDed with the filters; empty or null: no search.",
    },
    FacetsRequest: {
      type: "object",
      required: ["columns"],
      description: `The columns to count, and the filters and search as POST ${paths.rows} takes them (sortModel, startRow and endRow are ignored).`,
      properties: {
        columns: { type: "array", minItems: 1, maxItems: MAX_FACET_COLUMNS, items: { type: "string", enum: s.columns.filter((c) => KINDS[c.kind].facet !== null).map((c) => c.id) } },
        filterModel: { oneOf: [schema("FilterModel"), { type: "null" }] },
        quickFilter: schema("QuickFilter"),
        limit: { type: "integer", minimum: 1, maximum: MAX_FACET_LIMIT, default: DEFAULT_FACET_LIMIT, description: "Most values listed per column." },
        search: { type: ["string", "null"], maxLength: MAX_FILTER_LENGTH, description: "Keep the values whose folded string contains this." },
      },
    },
    ValueCount: {
      type: "object",
      required: ["value", "count"],
      properties: { value: { type: ["string", "boolean"] }, count: { type: "integer", minimum: 1 } },
    },
    Facet: {
      description:
        "enum, boolean and text columns list values (count descending, then value order); number, date and datetime columns give min and max. Counts are over the rows matching every filter except the column's own.",
      oneOf: [
        {
          type: "object",
          required: ["kind", "values", "distinct", "nulls"],
          properties: {
            kind: { type: "string", enum: ["enum", "boolean", "text"] },
            values: { type: "array", items: schema("ValueCount") },
            distinct: { type: "integer", minimum: 0, description: "Distinct values with a matching row (after search), listed or not." },
            nulls: { type: "integer", minimum: 0 },
          },
        },
        {
          type: "object",
          required: ["kind", "min", "max", "nulls"],
          properties: {
            kind: { type: "string", enum: ["number", "date", "datetime"] },
            min: { type: ["number", "string", "null"] },
            max: { type: ["number", "string", "null"] },
            nulls: { type: "integer", minimum: 0 },
          },
        },
      ],
    },
    FacetsResponse: {
      type: "object",
      required: ["facets", "total"],
      properties: {
        facets: { type: "object", additionalProperties: schema("Facet") },
        total: { type: "integer", minimum: 0, description: "Rows matching every filter and the search." },
      },
    },
    ExportRequest: {
      type: "object",
      description: `The format, and the sort, filters and search as POST ${paths.rows} takes them (startRow and endRow are ignored: every matching row).`,
      properties: {
        format: { type: "string", enum: ["csv", "ndjson"], default: "csv" },
        sortModel: { type: "array", items: schema("SortModelItem") },
        filterModel: { oneOf: [schema("FilterModel"), { type: "null" }] },
        quickFilter: schema("QuickFilter"),
      },
    },
    PostUsersResponse: {
      type: "object",
      description: "Shape C: the window's rows and the number of matching rows (AG Grid's lastRow).",
      required: ["data", "total"],
      properties: { data: { type: "array", items: schema("User") }, total: { type: "integer", minimum: 0 } },
    },
    ExplainRequest: {
      type: "object",
      description: `POST ${paths.rows}'s body, and \`analyze\`.`,
      properties: {
        ...rowsRequestProperties(s),
        analyze: { type: ["boolean", "null"], description: "Run the query too: every step gets `rows` and `ms`. Default false." },
      },
    },
    ExplainResponse: {
      type: "object",
      description: "The normalized query and the plan the engine made for it (run, with analyze).",
      required: ["query", "plan"],
      properties: { query: schema("NormalizedQuery"), plan: schema("PlanStep") },
    },
    NormalizedQuery: {
      type: "object",
      description: "The one query both listing requests parse into: the filter tree, the sort keys and the row window.",
      required: ["filter", "sort", "offset", "limit"],
      properties: {
        filter: { oneOf: [schema("Predicate"), { type: "null" }], description: "null: every row." },
        sort: {
          type: "array",
          items: {
            type: "object",
            required: ["column", "direction", "absolute"],
            properties: { column: { type: "string" }, direction: schema("SortDirection"), absolute: { type: "boolean" } },
          },
          description: `Rows still tied after the last key are ordered by ${s.key}.`,
        },
        offset: { type: "integer", minimum: 0, description: "First row of the window." },
        limit: { type: "integer", minimum: 0, description: "Rows in the window." },
      },
    },
    Predicate: {
      description: "A node of the filter tree: a test on one column, the global search, or all (`and`) or any (`or`) of its children.",
      oneOf: [
        {
          type: "object",
          required: ["kind", "column", "test"],
          properties: { kind: { type: "string", enum: ["column"] }, column: { type: "string" }, test: schema("ColumnTest") },
        },
        {
          type: "object",
          required: ["kind", "terms"],
          properties: {
            kind: { type: "string", enum: ["search"] },
            terms: { type: "array", items: { type: "string" } },
            columns: { type: "array", items: { type: "string" }, description: "The searchable columns the search looks into when the credential's role does not see them all; absent: every one." },
          },
        },
        {
          type: "object",
          required: ["kind", "children"],
          properties: { kind: { type: "string", enum: ["and", "or"] }, children: { type: "array", minItems: 1, items: schema("Predicate") } },
        },
      ],
    },
    ColumnTest: {
      description:
        "What a filter on a column compiles to: `range` (values in the interval; a missing bound is unbounded; dates and date-times written as in the records; `negate`: the values outside it), `null`, `text` (an AG Grid text condition on folded strings) or `set` (folded whole values).",
      oneOf: [
        {
          type: "object",
          required: ["op", "negate"],
          properties: {
            op: { type: "string", enum: ["range"] },
            lo: { type: ["number", "string", "boolean"] },
            loOpen: { type: "boolean" },
            hi: { type: ["number", "string", "boolean"] },
            hiOpen: { type: "boolean" },
            negate: { type: "boolean" },
          },
        },
        { type: "object", required: ["op", "negate"], properties: { op: { type: "string", enum: ["null"] }, negate: { type: "boolean" } } },
        { type: "object", required: ["op", "type", "value"], properties: { op: { type: "string", enum: ["text"] }, type: { type: "string" }, value: { type: "string" } } },
        {
          type: "object",
          required: ["op", "values", "nulls"],
          properties: { op: { type: "string", enum: ["set"] }, values: { type: "array", items: { type: "string" } }, nulls: { type: "boolean" } },
        },
      ],
    },
    PlanStep: {
      type: "object",
      description:
        "One step of the plan: what it does (`op`), the column and stored index it reads, the rows and cost the planner expects; with analyze, the rows it gave and the milliseconds it took (its children included). The root orders the filter's rows and cuts the window.",
      required: ["op"],
      properties: {
        op: { type: "string", description: "The step's operation (the list is in the section Explain of docs/api.md); `window` for the root alone that a credential's role that sees some rows or columns is shown, without estimates." },
        column: { type: "string" },
        index: { type: "string", description: "The stored index read." },
        detail: { type: "string", description: "The test, search term or window, for a person." },
        estimatedRows: { type: "integer", minimum: 0 },
        estimatedCost: { type: "integer", minimum: 0, description: "In the planner's units (about a nanosecond each)." },
        rows: { type: "integer", minimum: 0, description: "Analyze only: rows the step gave (the root: the window's rows)." },
        ms: { type: "number", minimum: 0, description: "Analyze only: milliseconds the step took." },
        children: { type: "array", items: schema("PlanStep") },
      },
    },
    ResourceIndex: {
      type: "object",
      description: "Where this server serves its data routes and its OpenAPI document.",
      required: ["resource", "paths", "openapi"],
      properties: {
        resource: { type: "string", description: "The resource name: the data routes are under /api/<resource>." },
        paths: {
          type: "object",
          required: ["rows", "schema", "facets", "export", "explain"],
          properties: {
            rows: { type: "string", description: "The listing (GET and POST)." },
            schema: { type: "string" },
            facets: { type: "string" },
            export: { type: "string" },
            explain: { type: "string" },
          },
        },
        openapi: { type: "string", description: "The path of this document." },
      },
    },
    Health: {
      type: "object",
      required: ["status", "rows", "snapshotId"],
      properties: { status: { type: "string", enum: ["ok"] }, ...served },
    },
    SourceStatus: {
      type: "object",
      description:
        "A replica's source (serve --source): its last poll, and how stale the replica is. Present on replicas only; on /readyz's 503 while starting too. The reasons are those of the users_listing_source_poll_failures_total metric; the log line of each failure has the details.",
      required: ["lastPoll", "lastSuccessAt", "stalenessSeconds", "consecutiveFailures", "latestSnapshotId"],
      properties: {
        lastPoll: {
          type: ["object", "null"],
          required: ["at", "result"],
          properties: {
            at: { type: "string", format: "date-time" },
            result: { type: "string", enum: ["ok", "failed"] },
            reason: { type: "string", enum: [...IO_REASONS], description: "Why it failed." },
          },
        },
        lastSuccessAt: { type: ["string", "null"], format: "date-time", description: "When a poll last succeeded." },
        stalenessSeconds: { type: "integer", minimum: 0, description: "Seconds since the replica last saw that it serves the published version." },
        consecutiveFailures: { type: "integer", minimum: 0, description: "Polls failed since the last success." },
        latestSnapshotId: { type: ["string", "null"], description: "The snapshot id the source's manifest named when last read." },
      },
    },
    Ready: {
      type: "object",
      description: "The service is serving a loaded snapshot.",
      required: ["status", "rows", "snapshotId"],
      properties: { status: { type: "string", enum: ["ready"] }, ...served },
    },
  };
}

/**
 * The named models (`components.schemas`) of the document for `context`, as TypeBox schemas
 * (each a JSON Schema the generator copies under its name); the routes' declarations refer
 * to them by name.
 */
export function declaredModels(context: DocContext): Record<string, TSchema> {
  return Object.fromEntries(Object.entries(componentSchemas(context)).map(([name, json]) => [name, (Kind in json ? json : t.Unsafe<unknown>(json)) as TSchema]));
}

/** One answer of a route: its description, body schema (none: `t.Void()`), headers and media types (none: no body). */
export interface Answer {
  description: string;
  schema: TSchema;
  headers?: Record<string, TSchema>;
  /** The body's media types, each with `schema`; empty for an answer without a body (304). */
  media: readonly string[];
}

/**
 * What a route declares: its operation's words (`detail`), its query parameters and request
 * headers (TypeBox objects: each property a parameter, optional unless required), its JSON
 * body, and its answers by HTTP status.
 */
export interface Declaration {
  detail: { operationId: string; summary: string; description?: string; tags: string[] };
  query?: TObject;
  headers?: TObject;
  /** The JSON body; `required` false when an empty body is accepted (read as `{}`). */
  body?: { schema: TSchema; required: boolean };
  answers: Record<number, Answer>;
}

/** Response headers, by what they say. */
const HEADER = {
  etag: t.String({ description: "Tag of this answer: a hash of the snapshot id and the normalized request. Send it back in If-None-Match." }),
  weakEtag: t.String({
    description:
      "A weak tag (`W/\"…\"`) of the snapshot id and the normalized request: answers with the tag mean the same query on the same data, though a plan may differ as the caches fill. Send it back in If-None-Match.",
  }),
  snapshotId: t.String({ description: "Id of the snapshot that answered." }),
  cacheControl: t.String({ description: "`no-cache`: a cache may keep the answer but must revalidate it (If-None-Match) before each use." }),
  vary: t.String({ description: "`Accept-Encoding` (and `Origin` with CORS on): the headers the body depends on." }),
  allow: t.String({ description: "The methods the path serves." }),
  wwwAuthenticate: t.String({ description: "`Bearer`." }),
  retryAfter: integer({ description: "Seconds to wait before sending the request again." }),
};

/** The headers of a POST data answer: the tag and the snapshot id (no 304, no caching). */
const POST_HEADERS = { ETag: HEADER.etag, "X-Snapshot-Id": HEADER.snapshotId, Vary: HEADER.vary };

/** The headers of every 200 of a GET data route. */
const DATA_HEADERS = { ...POST_HEADERS, "Cache-Control": HEADER.cacheControl };

/** The headers of an explain answer: a weak tag. */
const EXPLAIN_HEADERS = { ETag: HEADER.weakEtag, "X-Snapshot-Id": HEADER.snapshotId, "Cache-Control": HEADER.cacheControl, Vary: HEADER.vary };

/** An application/problem+json answer (RFC 9457: the `Problem` model). */
const problem = (description: string, headers?: Record<string, TSchema>): Answer => ({ description, schema: model("Problem"), headers, media: ["application/problem+json"] });

/** A JSON answer of a named model. */
const json = (description: string, name: string, headers?: Record<string, TSchema>): Answer => ({ description, schema: model(name), headers, media: ["application/json"] });

/** The answers shared by routes (docs/api.md "HTTP envelope" and "Errors"). */
export const ANSWERS = {
  notModified: {
    description: "The If-None-Match tag is still current: no body; reuse the cached answer.",
    schema: t.Void(),
    headers: { ETag: HEADER.etag, "X-Snapshot-Id": HEADER.snapshotId, "Cache-Control": HEADER.cacheControl, Vary: HEADER.vary },
    media: [],
  } satisfies Answer,
  badRequest: problem("A bad parameter or body field (each listed in `errors`), malformed JSON, or grouping/pivoting asked for."),
  unauthorized: problem(
    "API keys or access control are on and the request has no valid credential: no `Authorization: Bearer <token or key>`, an unknown key, or a JWT that does not verify or has expired (`detail` says which).",
    { "WWW-Authenticate": HEADER.wwwAuthenticate },
  ),
  forbidden: problem(
    "Access control is on and the credential is valid, but its role is not one of the policy's, it lacks a claim its role's filter reads (or holds one that does not fit it), or its role may not read this (the metrics need a role that sees every row and column).",
  ),
  methodNotAllowed: problem("The path does not serve this method; `Allow` lists those it does.", { Allow: HEADER.allow }),
  payloadTooLarge: problem(`The body is larger than ${BODY_LIMIT} (refused as soon as that much has arrived).`),
  unsupportedMediaType: problem("The body's Content-Type is given and is not JSON."),
  internalError: problem("An unexpected error, logged under `requestId`."),
  notReady: problem("Starting (no snapshot loaded yet) or draining after SIGTERM."),
  unavailable: problem(
    "An expensive query was not answered: it ran longer than the server's query timeout (`code: query_timeout`), or too many expensive queries were waiting (`code: overloaded`). Send it again after `Retry-After` seconds.",
    { "Retry-After": HEADER.retryAfter },
  ),
};

/** The error and 304 answers of a GET data route (401 is added for keyed routes). */
const GET_ANSWERS = { 304: ANSWERS.notModified, 400: ANSWERS.badRequest, 405: ANSWERS.methodNotAllowed, 500: ANSWERS.internalError, 503: ANSWERS.unavailable };

/** The error answers of a POST data route (401 is added for keyed routes). */
const POST_ANSWERS = {
  400: ANSWERS.badRequest,
  405: ANSWERS.methodNotAllowed,
  413: ANSWERS.payloadTooLarge,
  415: ANSWERS.unsupportedMediaType,
  500: ANSWERS.internalError,
  503: ANSWERS.unavailable,
};

/** The conditional-request header. */
const CONDITIONAL = t.Object({ "If-None-Match": t.Optional(t.String({ description: "An ETag of an earlier answer: 304 while it is current." })) });

/** A string query parameter at most MAX_FILTER_LENGTH long. */
const text = (description: string) => t.Optional(t.String({ maxLength: MAX_FILTER_LENGTH, description }));

/** The `filter[<col>]`, `q` and `search` parameters of the GET data routes, for the schema's columns (each kind's `getFormDoc`). */
function filterParameters(s: Schema) {
  const filters = s.columns.flatMap((c) => {
    const form = KINDS[c.kind].getFormDoc(c.id === s.key);
    return form === null ? [] : [[`filter[${c.id}]`, text(`${c.kind}: ${form}`)] as const];
  });
  return {
    ...Object.fromEntries(filters),
    q: text("Global search: white-space separated terms, each contained (case- and accent-insensitively) in the key, a text column or an enum column; ANDed with the filters."),
    search: text("Another spelling of q."),
  };
}

/** The sort parameters of the GET data routes. */
function sortParameters(s: Schema) {
  return {
    sortBy: t.Optional(model("ColumnId", `Column to sort by; without it rows come in ${s.key} order.`)),
    sort: t.Optional(model("ColumnId", "Another spelling of sortBy.")),
    sortOrder: t.Optional(t.String({ enum: ["asc", "desc"], default: "asc", description: "Sort direction; any case (`DESC`)." })),
    order: t.Optional(t.String({ enum: ["asc", "desc"], description: "Another spelling of sortOrder." })),
  };
}

/** Every parameter of GET on the listing: paging (both clients' spellings), sort, filters, search. */
function rowsParameters({ schema: s, maxPageSize }: DocContext) {
  return {
    page: t.Optional(integer({ minimum: 1, default: 1, description: "1-based page; a page past the end has no rows and the true total." })),
    pageSize: t.Optional(integer({ minimum: 1, maximum: maxPageSize, default: DEFAULT_PAGE_SIZE, description: "Rows per page." })),
    limit: t.Optional(integer({ minimum: 1, maximum: maxPageSize, description: "Another spelling of pageSize." })),
    ...sortParameters(s),
    ...filterParameters(s),
  };
}

/** GET on the listing (TanStack Table). */
export function getRowsDoc(context: DocContext): Declaration {
  return {
    detail: {
      operationId: "getUsers",
      summary: `List ${context.paths.name} (TanStack Table: page, sort, filters in the query string)`,
      description:
        "A page of the sorted, filtered rows. Brackets may be raw (`filter[name]`) or percent-encoded (`filter%5Bname%5D`), spaces `+` or `%20`. Two spellings given for one parameter must agree. Unknown parameters are ignored. HEAD answers the same headers without a body.",
      tags: [context.paths.name],
    },
    query: t.Object(rowsParameters(context)),
    headers: CONDITIONAL,
    answers: { 200: json("A page of rows", "GetUsersResponse", DATA_HEADERS), ...GET_ANSWERS },
  };
}

/** POST on the listing (AG Grid's Infinite Row Model). */
export function postRowsDoc({ maxPageSize, paths }: DocContext): Declaration {
  return {
    detail: {
      operationId: "postUsers",
      summary: `List ${paths.name} (AG Grid Infinite Row Model: a row window)`,
      description: `Rows [startRow, endRow) of the sorted, filtered rows; endRow - startRow at most ${maxPageSize}. The body is JSON (no Content-Type: read as JSON), at most ${BODY_LIMIT}; an empty body asks for the first ${DEFAULT_BLOCK_SIZE} rows.`,
      tags: [paths.name],
    },
    body: { schema: model("PostUsersRequest"), required: false },
    answers: { 200: json("A row window and the total", "PostUsersResponse", POST_HEADERS), ...POST_ANSWERS },
  };
}

/** GET schema. */
export function schemaDoc({ paths }: DocContext): Declaration {
  return {
    detail: { operationId: "getSchema", summary: "The served snapshot's columns (id, kind, enum values), row count and snapshot id", tags: [paths.name] },
    headers: CONDITIONAL,
    answers: { 200: json("The schema", "SnapshotSchema", DATA_HEADERS), 304: ANSWERS.notModified, 405: ANSWERS.methodNotAllowed, 500: ANSWERS.internalError },
  };
}

/** GET facets. */
export function getFacetsDoc({ schema: s, paths }: DocContext): Declaration {
  return {
    detail: {
      operationId: "getFacets",
      summary: "Distinct values with counts, or value ranges, per column (set filters, faceted tables)",
      description:
        "Per column, the counts are taken over the rows matching every filter except that column's own, so a set filter can show the other choices. Paging and sort parameters are ignored. HEAD answers the same headers without a body.",
      tags: [paths.name],
    },
    query: t.Object({
      columns: t.String({ description: "The columns to count, a comma list (columns whose kind has a facet)." }),
      facetLimit: t.Optional(integer({ minimum: 1, maximum: MAX_FACET_LIMIT, default: DEFAULT_FACET_LIMIT, description: "Most values listed per column." })),
      facetSearch: text("Keep the values whose folded string contains this."),
      ...filterParameters(s),
    }),
    headers: CONDITIONAL,
    answers: { 200: json("The facets and the matching row count", "FacetsResponse", DATA_HEADERS), ...GET_ANSWERS },
  };
}

/** POST facets. */
export function postFacetsDoc({ paths }: DocContext): Declaration {
  return {
    detail: { operationId: "postFacets", summary: "Facets for an AG Grid filter model and quick filter", tags: [paths.name] },
    body: { schema: model("FacetsRequest"), required: true },
    answers: { 200: json("The facets and the matching row count", "FacetsResponse", POST_HEADERS), ...POST_ANSWERS },
  };
}

/** The export's 200: every matching row as CSV or NDJSON, named by the resource. */
function exportAnswer(name: string, headers: Record<string, TSchema>): Answer {
  return {
    description:
      "Every matching row. text/csv: RFC 4180, a header of column ids, CRLF line ends, UTF-8; null an empty field, the empty string \"\". application/x-ndjson: one JSON record per line.",
    schema: t.String(),
    headers: { ...headers, "Content-Disposition": t.String({ description: `attachment; filename="${name}-<snapshotId>.<csv|ndjson>"` }) },
    media: ["text/csv", "application/x-ndjson"],
  };
}

/** GET export. */
export function getExportDoc({ schema: s, paths }: DocContext): Declaration {
  return {
    detail: {
      operationId: "getExport",
      summary: "Every matching row, in order, streamed as CSV or NDJSON",
      description: `The sort, filter and search parameters of GET ${paths.rows}; paging is ignored. Streamed with back-pressure; gzip when accepted.`,
      tags: [paths.name],
    },
    query: t.Object({ format: t.Optional(t.String({ enum: ["csv", "ndjson"], default: "csv", description: "The body's format." })), ...sortParameters(s), ...filterParameters(s) }),
    headers: CONDITIONAL,
    answers: { 200: exportAnswer(paths.name, DATA_HEADERS), ...GET_ANSWERS },
  };
}

/** POST export. */
export function postExportDoc({ paths }: DocContext): Declaration {
  return {
    detail: { operationId: "postExport", summary: "Every row matching an AG Grid sort and filter model, streamed as CSV or NDJSON", tags: [paths.name] },
    body: { schema: model("ExportRequest"), required: false },
    answers: { 200: exportAnswer(paths.name, POST_HEADERS), ...POST_ANSWERS },
  };
}

/** GET explain. */
export function getExplainDoc(context: DocContext): Declaration {
  return {
    detail: {
      operationId: "getExplain",
      summary: "The plan of a GET listing request, without reading rows (analyze: run it and time each step)",
      description: `Takes GET ${context.paths.rows}'s parameters, with the same errors, and \`analyze\`. Without analyze no row is read; with it the query runs as the listing would (waiting its turn when expensive) and never answers 304.`,
      tags: [context.paths.name],
    },
    query: t.Object({
      ...rowsParameters(context),
      analyze: t.Optional(t.String({ enum: ["true", "false"], default: "false", description: "`true`: run the query too; every step gets `rows` and `ms`. Any case." })),
    }),
    headers: CONDITIONAL,
    answers: { 200: json("The normalized query and its plan", "ExplainResponse", EXPLAIN_HEADERS), ...GET_ANSWERS },
  };
}

/** POST explain. */
export function postExplainDoc({ paths }: DocContext): Declaration {
  return {
    detail: {
      operationId: "postExplain",
      summary: "The plan of a POST listing request, without reading rows (analyze: run it and time each step)",
      description: `Takes POST ${paths.rows}'s body, with the same errors, and \`analyze\`.`,
      tags: [paths.name],
    },
    body: { schema: model("ExplainRequest"), required: false },
    answers: { 200: json("The normalized query and its plan", "ExplainResponse", EXPLAIN_HEADERS), ...POST_ANSWERS },
  };
}

/** GET /api: where the data routes are. */
export function resourceIndexDoc(): Declaration {
  return {
    detail: { operationId: "getResourceIndex", summary: "Where the data routes are (the resource name) and the OpenAPI document", tags: ["service"] },
    answers: { 200: json("The paths", "ResourceIndex"), 405: ANSWERS.methodNotAllowed },
  };
}

/** GET /healthz. */
export function healthDoc(): Declaration {
  return {
    detail: { operationId: "getHealth", summary: "Health: row count and snapshot id", tags: ["service"] },
    answers: { 200: json("Serving", "Health"), 405: ANSWERS.methodNotAllowed, 500: ANSWERS.internalError },
  };
}

/** GET /api/users/changes (docs/api.md "GET /api/users/changes"): Server-Sent Events. */
export function changesDoc({ paths }: DocContext): Declaration {
  return {
    detail: {
      operationId: "getChanges",
      summary: "Change events (Server-Sent Events): the version on connect, then the keys of the rows each applied batch changed",
      tags: [paths.name],
    },
    answers: {
      200: { description: "A text/event-stream of `version` and `change` events", schema: t.String(), media: ["text/event-stream"] },
      405: ANSWERS.methodNotAllowed,
      500: ANSWERS.internalError,
      503: ANSWERS.notReady,
    },
  };
}

/** GET /readyz. */
export function readyDoc(): Declaration {
  return {
    detail: { operationId: "getReady", summary: "Readiness: 200 while serving a loaded snapshot, 503 while starting or draining", tags: ["service"] },
    answers: { 200: json("Ready", "Ready"), 405: ANSWERS.methodNotAllowed, 503: ANSWERS.notReady },
  };
}

/** GET /metrics. */
export function metricsDoc(): Declaration {
  return {
    detail: {
      operationId: "getMetrics",
      summary: "Prometheus metrics",
      description:
        "Prometheus text format: request durations by route, method and status; requests in flight; engine cache hits, misses and bytes; snapshot rows, id and load time; reloads by result.",
      tags: ["service"],
    },
    answers: { 200: { description: "The metrics", schema: t.String(), media: ["text/plain"] }, 405: ANSWERS.methodNotAllowed },
  };
}

/** The optional credential: an API key, or, with access control, a JWT or a key of the access policy. */
const SECURITY_SCHEMES = {
  apiKey: {
    type: "http",
    scheme: "bearer",
    description:
      "Off by default. When the server is started with --api-keys-file or API_KEYS, every /api/* and /metrics request, and this document (/openapi/json), needs `Authorization: Bearer <key>`. With --access (access control), the credential is a JWT (HS256 with the policy's secret, or RS256/ES256 with its JWKS file) or a key of the policy, and its role decides which rows and columns every answer holds; this document then shows the role's columns. /healthz, /readyz and OPTIONS stay open.",
  },
};

/** Security of a keyed operation: a key, or none when keys are off. */
export const KEYED_SECURITY = [{ apiKey: [] }, {}];

/**
 * A keyed route's declaration with the key's answers: 401 (and 403 with access control on:
 * docs/api.md "API keys", "Access control").
 */
export function keyedDeclaration(declaration: Declaration, access: boolean): Declaration {
  const more: Record<number, Answer> = access ? { 401: ANSWERS.unauthorized, 403: ANSWERS.forbidden } : { 401: ANSWERS.unauthorized };
  return { ...declaration, answers: { ...declaration.answers, ...more } };
}

/** A generated parameter or header: its schema's description lifted beside it, where OpenAPI readers look for it. */
function lifted<T extends { schema?: Record<string, unknown> }>(item: T): T {
  const { description, ...rest } = item.schema ?? {};
  return description === undefined ? item : { ...item, description, schema: rest };
}

/**
 * The operation @elysiajs/openapi generated from `declaration`, finished where the generator
 * cannot say it: parameter and header descriptions beside their schemas, whether the body may
 * be left out, and each answer's description and media types (problem+json, CSV, NDJSON, event
 * streams; none for a 304), in status order. The schemas and headers are the generator's.
 * @param operation the generator's operation object (plain JSON) for the route
 */
export function finishOperation(operation: Record<string, any>, declaration: Declaration): Record<string, unknown> {
  const out: Record<string, any> = { ...operation };
  if (Array.isArray(out.parameters)) out.parameters = out.parameters.map(lifted);
  if (out.requestBody !== undefined && declaration.body !== undefined) {
    const { description: _, ...body } = out.requestBody;
    out.requestBody = { ...body, required: declaration.body.required };
  }
  const generated: Record<string, any> = operation.responses ?? {};
  const statuses = Object.keys(declaration.answers).sort((a, b) => a.localeCompare(b));
  out.responses = Object.fromEntries(
    statuses.map((status) => {
      const answer = declaration.answers[Number(status)];
      const got = generated[status] ?? {};
      const content = got.content === undefined ? undefined : (Object.values(got.content)[0] as { schema?: unknown } | undefined);
      const headers = got.headers === undefined ? {} : { headers: Object.fromEntries(Object.entries(got.headers as Record<string, { schema: Record<string, unknown> }>).map(([name, h]) => [name, lifted(h)])) };
      const media = answer.media.length === 0 || content?.schema === undefined ? {} : { content: Object.fromEntries(answer.media.map((m) => [m, { schema: content.schema }])) };
      return [status, { description: answer.description, ...headers, ...media }];
    }),
  );
  return out;
}

/**
 * The OpenAPI document for a served snapshot around what the generator made from the declared
 * routes (app.ts `declaredPaths`): their `paths` and the `components.schemas` of their models.
 * @param generated @elysiajs/openapi's `toOpenAPISchema` output, operations finished ({@link finishOperation})
 * @param context the served snapshot's schema and the server's settings
 * @returns an OpenAPI 3.1 document (plain JSON)
 */
export function openApiDocument(generated: { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } }, context: DocContext): Record<string, unknown> {
  return {
    openapi: "3.1.1",
    info: {
      title: `${context.paths.name} listing service`,
      version: "1.0.0",
      description:
        "Server-side paging, sorting and filtering of records for TanStack Table (GET) and AG Grid's Infinite Row Model (POST), with search, facets, export and explain. Errors are application/problem+json; an unknown path (a trailing slash included) is a 404 and a known path with another method a 405. The full contract, with examples: docs/api.md in the repository.",
    },
    servers: [{ url: "/", description: "This server" }],
    tags: [
      { name: context.paths.name, description: `The data: listing, schema, facets, export and explain of ${context.paths.rows}` },
      { name: "service", description: "Health, readiness and metrics" },
    ],
    paths: generated.paths,
    components: { schemas: generated.components.schemas, securitySchemes: SECURITY_SCHEMES },
  };
}
