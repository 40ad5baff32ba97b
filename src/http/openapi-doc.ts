/**
 * The OpenAPI 3.1 description of the service, for the docs UI and for code generators
 * (openapi-typescript, openapi-generator): named component schemas under
 * `components.schemas` — the records, the three response bodies, the POST body with AG Grid's
 * sort and filter models, problem+json — that the operations reference with `$ref`; reusable
 * responses and headers; the optional bearer key. Nullable values are written the 3.1 way
 * (`type: [..., "null"]` or `oneOf` with `{type: "null"}`). Request schemas state their defaults in
 * words, not with `default`: generators such as openapi-typescript make a property with a
 * default required, which would force clients to send what they may leave out.
 *
 * Documentation only: requests are validated by src/query, responses are pre-serialized, and
 * nothing here is checked at run time. @elysiajs/openapi copies each route's `detail` into its
 * operation as it is, and merges {@link openApiDocumentation} (info, servers, tags, components)
 * into the document it serves at /openapi/json.
 *
 * Source of the rules: the contract in docs/api.md (limits: src/query/get.ts, src/query/post.ts,
 * src/query/errors.ts; the body limit: src/http/app.ts MAX_BODY_BYTES).
 */
import { MAX_LISTED_ERRORS } from "../query/errors.ts";
import { MAX_FILTER_LENGTH } from "../kinds/operators.ts";
import { MAX_CONDITIONS_PER_COLUMN, MAX_PREDICATES } from "../query/post.ts";
import { DEFAULT_FACET_LIMIT, MAX_FACET_COLUMNS, MAX_FACET_LIMIT } from "../query/facets.ts";
import { KINDS } from "../kinds/registry.ts";
import type { Schema } from "../schema/kinds.ts";
import { SEED_SCHEMA } from "../schema/kinds.ts";
import { IO_REASONS } from "../files/errors.ts";

/** A `$ref` to a named component. */
const ref = (kind: "schemas" | "responses" | "headers" | "parameters", name: string) => ({ $ref: `#/components/${kind}/${name}` });
const schema = (name: string) => ref("schemas", name);
const response = (name: string) => ref("responses", name);
const header = (name: string) => ref("headers", name);

/** The largest POST body, as the documents say it (src/http/app.ts MAX_BODY_BYTES). */
const BODY_LIMIT = "64 KiB";

/** AG Grid text filter types (src/query/post.ts). */
const TEXT_TYPES = ["contains", "notContains", "equals", "notEqual", "startsWith", "endsWith", "blank", "notBlank"];

/** AG Grid number filter types (src/query/post.ts). */
const NUMBER_TYPES = ["equals", "notEqual", "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual", "inRange", "blank", "notBlank"];

/** A problem+json media type object. */
const problemContent = { "application/problem+json": { schema: schema("Problem") } };

/** The JSON Schema of each of the seed's four columns (never null). */
const SEED_VALUE_SCHEMAS: Record<string, object> = {
  id: { type: "number", description: "Unique, finite." },
  name: { type: "string" },
  email: { type: "string" },
  status: { type: "string", enum: ["active", "inactive"] },
};

/** Column ids a filter may name: every kind but json. */
function filterableIds(s: Schema): string[] {
  return s.columns.filter((c) => KINDS[c.kind].filterTypes.length > 0).map((c) => c.id);
}

/**
 * The named schemas (`components.schemas`) for a snapshot's schema: the record (`User`) has every
 * column, the seed's four required, the others nullable by their kind (src/kinds: `jsonSchema`);
 * the column ids and the filter model name the schema's columns.
 */
function componentSchemas(s: Schema) {
  const ids = s.columns.map((c) => c.id);
  const sortable = s.columns.filter((c) => KINDS[c.kind].sortable).map((c) => c.id);
  const filterable = filterableIds(s);
  return {
  ColumnId: {
    type: "string",
    enum: sortable,
    description: `A sortable column id (every column but json ones). Any other id in a sort or filter is a 400 that lists the columns: ${ids.join(", ")}.`,
  },
  SortDirection: { type: "string", enum: ["asc", "desc"] },
  User: {
    type: "object",
    description: "One user record, every column in schema order (GET /api/users/schema lists them).",
    required: ids,
    properties: Object.fromEntries(s.columns.map((c) => [c.id, SEED_VALUE_SCHEMAS[c.id] ?? KINDS[c.kind].jsonSchema(c)])),
  },
  ColumnKind: { type: "string", enum: Object.keys(KINDS) },
  Column: {
    type: "object",
    required: ["id", "kind"],
    properties: {
      id: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]{0,63}$" },
      kind: schema("ColumnKind"),
      values: { type: "array", items: { type: "string" }, description: "An enum's values, in their sort order." },
    },
  },
  SnapshotSchema: {
    type: "object",
    description: "The served snapshot's columns in schema order, its row count and id.",
    required: ["columns", "rows", "snapshotId"],
    properties: { columns: { type: "array", items: schema("Column") }, rows: { type: "integer", minimum: 0 }, snapshotId: { type: "string" } },
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
        description: "The sort and filters applied, normalized; empty when none.",
        properties: {
          sortBy: schema("ColumnId"),
          sortOrder: schema("SortDirection"),
          filters: {
            type: "object",
            description: "Each applied filter's value, normalized (status lower case, id numbers canonical); empty values left out.",
            properties: Object.fromEntries(filterable.map((c) => [c, { type: "string" }])),
            additionalProperties: false,
          },
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
        description: "Default `default`. `absolute` orders `id` by its absolute value (ties: the negative first when ascending); other columns ignore it.",
      },
    },
  },
  TextFilterModel: {
    type: "object",
    description:
      "AG Grid text filter, on every column but json ones. Compares folded strings (NFKD, marks removed, lower case; the input is not trimmed) of the value's output string (numbers as `String(n)`, dates as `YYYY-MM-DD`, date-times as ISO 8601 UTC). `blank` matches empty or white-space values; null passes only `notEqual`, `notContains` and `blank`.",
    required: ["filterType"],
    additionalProperties: false,
    properties: {
      filterType: { type: "string", enum: ["text"] },
      type: { type: ["string", "null"], enum: [...TEXT_TYPES, null], description: "Default (absent or null): `contains`." },
      filter: { type: ["string", "number", "null"], maxLength: MAX_FILTER_LENGTH, description: "Needed by every type but `blank` and `notBlank`." },
      filterTo: { type: ["string", "null"], description: "Sent by AG Grid; unused by text filters." },
    },
  },
  NumberFilterModel: {
    type: "object",
    description: "AG Grid number filter, on number columns. `inRange` is exclusive at both ends; null passes only `blank`.",
    required: ["filterType"],
    additionalProperties: false,
    properties: {
      filterType: { type: "string", enum: ["number"] },
      type: { type: ["string", "null"], enum: [...NUMBER_TYPES, null], description: "Default (absent or null): `equals`." },
      filter: { type: ["number", "string", "null"], description: "A number, or a numeric string (coerced). Needed by every type but `blank` and `notBlank`." },
      filterTo: { type: ["number", "string", "null"], description: "The upper bound of `inRange`." },
    },
  },
  DateFilterModel: {
    type: "object",
    description: "AG Grid date filter, on date and date-time columns: compares UTC calendar days (`inRange` strictly between the two days); null passes only `blank`.",
    required: ["filterType"],
    additionalProperties: false,
    properties: {
      filterType: { type: "string", enum: ["date"] },
      type: { type: ["string", "null"], enum: ["equals", "notEqual", "lessThan", "greaterThan", "inRange", "blank", "notBlank", null], description: "Default (absent or null): `equals`." },
      dateFrom: { type: ["string", "null"], description: "A day: `2024-03-01 00:00:00` (AG Grid's form), `2024-03-01` or an ISO 8601 date-time. Needed by every type but `blank` and `notBlank`." },
      dateTo: { type: ["string", "null"], description: "The upper day of `inRange`." },
    },
  },
  SetFilterModel: {
    type: "object",
    description: "AG Grid set filter: the value equals one of `values` (whole values, folded; `status` case-insensitive; `id` numerically). `null` stands for blank values. An empty list matches nothing.",
    required: ["filterType", "values"],
    additionalProperties: false,
    properties: {
      filterType: { type: "string", enum: ["set"] },
      values: { type: "array", items: { type: ["string", "number", "null"], maxLength: MAX_FILTER_LENGTH } },
    },
  },
  CombinedFilterModel: {
    type: "object",
    description: `AG Grid combined filter: one column's conditions joined with AND or OR; at most ${MAX_CONDITIONS_PER_COLUMN} conditions.`,
    required: ["operator", "conditions"],
    additionalProperties: false,
    properties: {
      filterType: { type: "string", enum: ["text", "number", "date", "set"], description: "Each condition's filterType must equal it." },
      operator: { type: "string", enum: ["AND", "OR"] },
      conditions: {
        type: "array",
        minItems: 1,
        maxItems: MAX_CONDITIONS_PER_COLUMN,
        items: { oneOf: [schema("TextFilterModel"), schema("NumberFilterModel"), schema("DateFilterModel"), schema("SetFilterModel")] },
      },
    },
  },
  ColumnFilterModel: {
    description: "One column's filter model: text, number (number columns), date (date and date-time columns), set, or combined. A model the column's kind does not take is a 400.",
    oneOf: [schema("TextFilterModel"), schema("NumberFilterModel"), schema("DateFilterModel"), schema("SetFilterModel"), schema("CombinedFilterModel")],
  },
  FilterModel: {
    type: "object",
    description: `AG Grid's filterModel: a filter model per column, all ANDed; a null column is no filter. At most ${MAX_PREDICATES} conditions in all.`,
    additionalProperties: false,
    properties: Object.fromEntries(filterable.map((c) => [c, { oneOf: [schema("ColumnFilterModel"), { type: "null" }] }])),
  },
  PostUsersRequest: {
    type: "object",
    description:
      "AG Grid Infinite Row Model's getRows request. Other fields (`context`, …) are ignored, except that non-empty `rowGroupCols`, `groupKeys`, `pivotCols`, `valueCols` or `pivotMode: true` are a 400: grouping and pivoting are not served.",
    properties: {
      startRow: { type: "integer", minimum: 0, description: "First row of the window (0-based); default 0." },
      endRow: { type: "integer", minimum: 0, description: "End of the window, exclusive; at least startRow; default startRow + 100. Not clamped to the total." },
      sortModel: { type: "array", items: schema("SortModelItem"), description: "Sort keys by priority; default `[]` (id order). Rows still tied after the last key are ordered by id." },
      filterModel: { oneOf: [schema("FilterModel"), { type: "null" }], description: "`null` or `{}`: no filter." },
      quickFilter: schema("QuickFilter"),
    },
  },
  QuickFilter: {
    type: ["string", "null"],
    maxLength: MAX_FILTER_LENGTH,
    description:
      "The global search (AG Grid's quick filter text): split on white space; every term, folded, must be contained in the folded string of id, a text column or an enum column. ANDed with the filters; empty or null: no search.",
  },
  FacetsRequest: {
    type: "object",
    required: ["columns"],
    description: "The columns to count, and the filters and search as POST /api/users takes them (sortModel, startRow and endRow are ignored).",
    properties: {
      columns: { type: "array", minItems: 1, maxItems: MAX_FACET_COLUMNS, items: { type: "string", enum: s.columns.filter((c) => c.kind !== "json").map((c) => c.id) } },
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
    description: "enum, boolean and text columns list values (count descending, then value order); number, date and datetime columns give min and max. Counts are over the rows matching every filter except the column's own.",
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
    description: "The format, and the sort, filters and search as POST /api/users takes them (startRow and endRow are ignored: every matching row).",
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
  Health: {
    type: "object",
    required: ["status", "rows", "snapshotId"],
    properties: {
      status: { type: "string", enum: ["ok"] },
      rows: { type: "integer", minimum: 0, description: "Rows in the snapshot being served." },
      snapshotId: { type: "string", description: "Id of the snapshot being served." },
      createdAt: { type: "string", format: "date-time", description: "When the snapshot being served was built." },
      ageSeconds: { type: "integer", minimum: 0, description: "Seconds since it was built." },
      source: schema("SourceStatus"),
    },
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
    properties: {
      status: { type: "string", enum: ["ready"] },
      rows: { type: "integer", minimum: 0, description: "Rows in the snapshot being served." },
      snapshotId: { type: "string", description: "Id of the snapshot being served." },
      createdAt: { type: "string", format: "date-time", description: "When the snapshot being served was built." },
      ageSeconds: { type: "integer", minimum: 0, description: "Seconds since it was built." },
      source: schema("SourceStatus"),
    },
  },
  };
}

/** Response headers (`components.headers`). */
const HEADERS = {
  ETag: {
    description: "Tag of this answer: a hash of the snapshot id and the normalized request. Send it back in If-None-Match.",
    schema: { type: "string" },
  },
  XSnapshotId: { description: "Id of the snapshot that answered.", schema: { type: "string" } },
  CacheControl: { description: "`no-cache`: a cache may keep the answer but must revalidate it (If-None-Match) before each use.", schema: { type: "string" } },
  Vary: { description: "`Accept-Encoding` (and `Origin` with CORS on): the headers the body depends on.", schema: { type: "string" } },
  Allow: { description: "The methods the path serves.", schema: { type: "string" } },
  WWWAuthenticate: { description: "`Bearer`.", schema: { type: "string" } },
};

/** Reusable responses (`components.responses`). */
const RESPONSES = {
  NotModified: {
    description: "The If-None-Match tag is still current: no body; reuse the cached answer.",
    headers: { ETag: header("ETag"), "X-Snapshot-Id": header("XSnapshotId"), "Cache-Control": header("CacheControl"), Vary: header("Vary") },
  },
  BadRequest: { description: "A bad parameter or body field (each listed in `errors`), malformed JSON, or grouping/pivoting asked for.", content: problemContent },
  Unauthorized: {
    description: "API keys are configured and the request has no `Authorization: Bearer <key>` with one of them.",
    headers: { "WWW-Authenticate": header("WWWAuthenticate") },
    content: problemContent,
  },
  NotFound: { description: "No resource at this path (a documented path with a trailing slash included).", content: problemContent },
  MethodNotAllowed: { description: "The path does not serve this method; `Allow` lists those it does.", headers: { Allow: header("Allow") }, content: problemContent },
  PayloadTooLarge: { description: `The body is larger than ${BODY_LIMIT} (refused as soon as that much has arrived).`, content: problemContent },
  UnsupportedMediaType: { description: "The body's Content-Type is given and is not JSON.", content: problemContent },
  InternalError: { description: "An unexpected error, logged under `requestId`.", content: problemContent },
  NotReady: { description: "Starting (no snapshot loaded yet) or draining after SIGTERM.", content: problemContent },
};

/** The optional API key. */
const SECURITY_SCHEMES = {
  apiKey: {
    type: "http",
    scheme: "bearer",
    description:
      "Off by default. When the server is started with --api-keys-file or API_KEYS, every /api/* and /metrics request, and this document (/openapi/json), needs `Authorization: Bearer <key>`; /healthz, /readyz and OPTIONS stay open.",
  },
};

/** Security of the key-protected operations: a key, or none when keys are off. */
const KEYED = [{ apiKey: [] }, {}];

/** The headers of a POST data answer: the tag and the snapshot id (no 304, no caching). */
const POST_HEADERS = { ETag: header("ETag"), "X-Snapshot-Id": header("XSnapshotId"), Vary: header("Vary") };

/** The headers of every 200 of a GET data route. */
const DATA_HEADERS = { ...POST_HEADERS, "Cache-Control": header("CacheControl") };

/**
 * The document-level parts merged by @elysiajs/openapi into the served document: info,
 * servers, tags and every component; the paths come from the routes' `detail`.
 * @param s the served snapshot's schema (docs/api.md: the document describes its columns)
 * @returns an OpenAPI 3.1 fragment (plain JSON)
 */
export function openApiDocumentation(s: Schema = SEED_SCHEMA) {
  return {
    info: {
      title: "Users listing service",
      version: "1.0.0",
      description:
        "Server-side paging, sorting and filtering of user records for TanStack Table (GET) and AG Grid's Infinite Row Model (POST). Errors are application/problem+json; an unknown path (a trailing slash included) is a 404 and a known path with another method a 405. The full contract, with examples: docs/api.md in the repository.",
    },
    servers: [{ url: "/", description: "This server" }],
    tags: [
      { name: "users", description: "The listing" },
      { name: "service", description: "Health, readiness and metrics" },
    ],
    components: { schemas: componentSchemas(s), responses: RESPONSES, headers: HEADERS, securitySchemes: SECURITY_SCHEMES },
    // The operations routes are described here whatever `detail` their routes carry (the
    // plugin lets these paths replace the ones it derives from the routes).
    paths: { "/readyz": { get: readyDoc }, "/metrics": { get: metricsDoc } },
  };
}

/** An example GET `filter[col]` value per kind, for the document. */
const FILTER_EXAMPLES: Record<string, string> = { number: "18,65", date: "2024-01-01,2024-03-31", datetime: "2024-01-01,2024-03-31", boolean: "true", text: "x", enum: "x" };

/** The GET /api/users operation's `detail`: parameters (both clients' spellings) and responses. */
/** A query parameter's description. */
const queryParameter = (name: string, schema: object, description: string) => ({ name, in: "query", required: false, schema, description });

/** The `filter[<col>]`, `q` and `search` parameters of the GET data routes, for the schema's columns. */
function filterParameters(s: Schema) {
  const filter = (column: string, description: string, example: string) => ({
    ...queryParameter(`filter[${column}]`, { type: "string", maxLength: MAX_FILTER_LENGTH }, description),
    example,
  });
  return [
    filter("id", '"42": equals; "10,50": inclusive range, either side may be empty ("10,", ",50").', "10,50"),
    filter("name", "Substring, case- and accent-insensitive.", "jose"),
    filter("email", "Substring, case- and accent-insensitive.", "example.com"),
    filter("status", "A value, or a comma list meaning any of them; any case.", "active,inactive"),
    ...s.columns.slice(4).flatMap((c) => {
      const form = KINDS[c.kind].getFormDoc;
      return form === null ? [] : [filter(c.id, `${c.kind}: ${form}`, c.kind === "enum" ? (c.values?.[0] ?? "x") : FILTER_EXAMPLES[c.kind])];
    }),
    queryParameter("q", { type: "string", maxLength: MAX_FILTER_LENGTH }, "Global search: white-space separated terms, each contained (case- and accent-insensitively) in id, a text column or an enum column; ANDed with the filters."),
    queryParameter("search", { type: "string", maxLength: MAX_FILTER_LENGTH }, "Another spelling of q."),
  ];
}

/** The conditional-request header parameter. */
const IF_NONE_MATCH = { name: "If-None-Match", in: "header", required: false, schema: { type: "string" }, description: "An ETag of an earlier answer: 304 while it is current." };

/** The sort parameters of the GET data routes. */
const SORT_PARAMETERS = [
  queryParameter("sortBy", schema("ColumnId"), "Column to sort by; without it rows come in id order."),
  queryParameter("sort", schema("ColumnId"), "Another spelling of sortBy."),
  queryParameter("sortOrder", { type: "string", enum: ["asc", "desc"], default: "asc" }, "Sort direction; any case (`DESC`)."),
  queryParameter("order", { type: "string", enum: ["asc", "desc"] }, "Another spelling of sortOrder."),
];

export function getUsersDoc(maxPageSize: number, s: Schema = SEED_SCHEMA) {
  const q = queryParameter;
  return {
    operationId: "getUsers",
    summary: "List users (TanStack Table: page, sort, filters in the query string)",
    description:
      "A page of the sorted, filtered users. Brackets may be raw (`filter[name]`) or percent-encoded (`filter%5Bname%5D`), spaces `+` or `%20`. Two spellings given for one parameter must agree. Unknown parameters are ignored. HEAD answers the same headers without a body.",
    tags: ["users"],
    security: KEYED,
    parameters: [
      q("page", { type: "integer", minimum: 1, default: 1 }, "1-based page; a page past the end has no rows and the true total."),
      q("pageSize", { type: "integer", minimum: 1, maximum: maxPageSize, default: 10 }, "Rows per page."),
      q("limit", { type: "integer", minimum: 1, maximum: maxPageSize }, "Another spelling of pageSize."),
      ...SORT_PARAMETERS,
      ...filterParameters(s),
      IF_NONE_MATCH,
    ],
    responses: {
      200: { description: "A page of users", headers: DATA_HEADERS, content: { "application/json": { schema: schema("GetUsersResponse") } } },
      ...dataRouteAnswers("get"),
    },
  };
}

/**
 * The error and 304 answers of a data route: a GET's 304, 400, 401, 405, 500; a POST's 400,
 * 401, 405, 413, 415, 500.
 */
function dataRouteAnswers(method: "get" | "post") {
  return method === "get"
    ? { 304: response("NotModified"), 400: response("BadRequest"), 401: response("Unauthorized"), 405: response("MethodNotAllowed"), 500: response("InternalError") }
    : {
        400: response("BadRequest"),
        401: response("Unauthorized"),
        405: response("MethodNotAllowed"),
        413: response("PayloadTooLarge"),
        415: response("UnsupportedMediaType"),
        500: response("InternalError"),
      };
}

/** GET /api/users/facets's `detail`. */
export function getFacetsDoc(s: Schema = SEED_SCHEMA) {
  const q = queryParameter;
  return {
    operationId: "getFacets",
    summary: "Distinct values with counts, or value ranges, per column (set filters, faceted tables)",
    description:
      "Per column, the counts are taken over the rows matching every filter except that column's own, so a set filter can show the other choices. Paging and sort parameters are ignored. HEAD answers the same headers without a body.",
    tags: ["users"],
    security: KEYED,
    parameters: [
      { ...q("columns", { type: "string" }, "The columns to count, a comma list (not json columns)."), required: true, example: "status" },
      q("facetLimit", { type: "integer", minimum: 1, maximum: MAX_FACET_LIMIT, default: DEFAULT_FACET_LIMIT }, "Most values listed per column."),
      q("facetSearch", { type: "string", maxLength: MAX_FILTER_LENGTH }, "Keep the values whose folded string contains this."),
      ...filterParameters(s),
      IF_NONE_MATCH,
    ],
    responses: {
      200: { description: "The facets and the matching row count", headers: DATA_HEADERS, content: { "application/json": { schema: schema("FacetsResponse") } } },
      ...dataRouteAnswers("get"),
    },
  };
}

/** POST /api/users/facets's `detail`. */
export const postFacetsDoc = {
  operationId: "postFacets",
  summary: "Facets for an AG Grid filter model and quick filter",
  tags: ["users"],
  security: KEYED,
  requestBody: { required: true, content: { "application/json": { schema: schema("FacetsRequest") } } },
  responses: {
    200: { description: "The facets and the matching row count", headers: POST_HEADERS, content: { "application/json": { schema: schema("FacetsResponse") } } },
    ...dataRouteAnswers("post"),
  },
};

/** The export answer's content. */
const EXPORT_CONTENT = {
  "text/csv": { schema: { type: "string", description: "RFC 4180: a header of column ids, CRLF line ends, UTF-8; null an empty field, the empty string \"\"." } },
  "application/x-ndjson": { schema: { type: "string", description: "One JSON record per line." } },
};

/** The export answer's headers. */
const EXPORT_HEADERS = {
  ...DATA_HEADERS,
  "Content-Disposition": { description: 'attachment; filename="users-<snapshotId>.<csv|ndjson>"', schema: { type: "string" } },
};

/** GET /api/users/export's `detail`. */
export function getExportDoc(s: Schema = SEED_SCHEMA) {
  return {
    operationId: "getExport",
    summary: "Every matching row, in order, streamed as CSV or NDJSON",
    description: "The sort, filter and search parameters of GET /api/users; paging is ignored. Streamed with back-pressure; gzip when accepted.",
    tags: ["users"],
    security: KEYED,
    parameters: [queryParameter("format", { type: "string", enum: ["csv", "ndjson"], default: "csv" }, "The body's format."), ...SORT_PARAMETERS, ...filterParameters(s), IF_NONE_MATCH],
    responses: {
      200: { description: "Every matching row", headers: EXPORT_HEADERS, content: EXPORT_CONTENT },
      ...dataRouteAnswers("get"),
    },
  };
}

/** POST /api/users/export's `detail`. */
export const postExportDoc = {
  operationId: "postExport",
  summary: "Every row matching an AG Grid sort and filter model, streamed as CSV or NDJSON",
  tags: ["users"],
  security: KEYED,
  requestBody: { required: false, content: { "application/json": { schema: schema("ExportRequest") } } },
  responses: {
    200: { description: "Every matching row", headers: { ...POST_HEADERS, "Content-Disposition": EXPORT_HEADERS["Content-Disposition"] }, content: EXPORT_CONTENT },
    ...dataRouteAnswers("post"),
  },
};

/** The POST /api/users operation's `detail`: the AG Grid request body and responses. */
export function postUsersDoc(maxPageSize: number) {
  return {
    operationId: "postUsers",
    summary: "List users (AG Grid Infinite Row Model: a row window)",
    description: `Rows [startRow, endRow) of the sorted, filtered users; endRow - startRow at most ${maxPageSize}. The body is JSON (no Content-Type: read as JSON), at most ${BODY_LIMIT}; an empty body asks for the first 100 rows.`,
    tags: ["users"],
    security: KEYED,
    requestBody: { required: false, content: { "application/json": { schema: schema("PostUsersRequest") } } },
    responses: {
      200: {
        description: "A row window and the total",
        headers: POST_HEADERS,
        content: { "application/json": { schema: schema("PostUsersResponse") } },
      },
      400: response("BadRequest"),
      401: response("Unauthorized"),
      405: response("MethodNotAllowed"),
      413: response("PayloadTooLarge"),
      415: response("UnsupportedMediaType"),
      500: response("InternalError"),
    },
  };
}

/** The GET /healthz operation's `detail`. */
export const healthDoc = {
  operationId: "getHealth",
  summary: "Health: row count and snapshot id",
  tags: ["service"],
  security: [],
  responses: {
    200: { description: "Serving", content: { "application/json": { schema: schema("Health") } } },
    405: response("MethodNotAllowed"),
    500: response("InternalError"),
  },
};

/** The GET /readyz operation's `detail`. */
export const readyDoc = {
  operationId: "getReady",
  summary: "Readiness: 200 while serving a loaded snapshot, 503 while starting or draining",
  tags: ["service"],
  security: [],
  responses: {
    200: { description: "Ready", content: { "application/json": { schema: schema("Ready") } } },
    405: response("MethodNotAllowed"),
    503: response("NotReady"),
  },
};

/** The GET /metrics operation's `detail`. */
export const metricsDoc = {
  operationId: "getMetrics",
  summary: "Prometheus metrics",
  description:
    "Prometheus text format: request durations by route, method and status; requests in flight; engine cache hits, misses and bytes; snapshot rows, id and load time; reloads by result.",
  tags: ["service"],
  security: KEYED,
  responses: {
    200: { description: "The metrics", content: { "text/plain": { schema: { type: "string" } } } },
    401: response("Unauthorized"),
    405: response("MethodNotAllowed"),
  },
};

/** The GET /api/users/schema operation's `detail`. */
export const schemaDoc = {
  operationId: "getSchema",
  summary: "The served snapshot's columns (id, kind, enum values), row count and snapshot id",
  tags: ["users"],
  security: KEYED,
  responses: {
    200: { description: "The schema", headers: DATA_HEADERS, content: { "application/json": { schema: schema("SnapshotSchema") } } },
    304: response("NotModified"),
    401: response("Unauthorized"),
    405: response("MethodNotAllowed"),
    500: response("InternalError"),
  },
};

/**
 * The served document for a snapshot's schema: `base` (the document as @elysiajs/openapi serves
 * it) with the components and the GET /api/users parameters of `s`. Used when the served
 * snapshot's schema is not the one the app was built with (a reload).
 */
export function documentFor(base: Record<string, unknown>, s: Schema, maxPageSize: number): Record<string, unknown> {
  const doc = structuredClone(base) as { components?: { schemas?: unknown }; paths?: Record<string, { get?: { parameters?: unknown } }> };
  doc.components = { ...(doc.components ?? {}), schemas: componentSchemas(s) };
  const get = doc.paths?.["/api/users"]?.get;
  if (get !== undefined) get.parameters = getUsersDoc(maxPageSize, s).parameters;
  const facets = doc.paths?.["/api/users/facets"]?.get;
  if (facets !== undefined) facets.parameters = getFacetsDoc(s).parameters;
  const exported = doc.paths?.["/api/users/export"]?.get;
  if (exported !== undefined) exported.parameters = getExportDoc(s).parameters;
  return doc as Record<string, unknown>;
}

