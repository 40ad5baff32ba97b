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
import { MAX_FILTER_LENGTH } from "../query/get.ts";
import { MAX_CONDITIONS_PER_COLUMN, MAX_PREDICATES } from "../query/post.ts";
import { COLUMN_IDS, STATUS_VALUES } from "../schema.ts";

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

/** The named schemas (`components.schemas`). */
const SCHEMAS = {
  ColumnId: {
    type: "string",
    enum: [...COLUMN_IDS],
    description: "A column id. Any other id in a sort or filter is a 400 that lists these.",
  },
  SortDirection: { type: "string", enum: ["asc", "desc"] },
  User: {
    type: "object",
    description: "One user record, every column in schema order.",
    required: ["id", "name", "email", "status"],
    properties: {
      id: { type: "number", description: "Unique, finite." },
      name: { type: "string" },
      email: { type: "string" },
      status: { type: "string", enum: [...STATUS_VALUES] },
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
            properties: Object.fromEntries(COLUMN_IDS.map((c) => [c, { type: "string" }])),
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
      "AG Grid text filter. Compares folded strings (NFKD, marks removed, lower case; the input is not trimmed); on `id` the decimal string, on `status` its value. `blank` matches empty or white-space values.",
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
    description: "AG Grid number filter, on `id` only. `inRange` is exclusive at both ends.",
    required: ["filterType"],
    additionalProperties: false,
    properties: {
      filterType: { type: "string", enum: ["number"] },
      type: { type: ["string", "null"], enum: [...NUMBER_TYPES, null], description: "Default (absent or null): `equals`." },
      filter: { type: ["number", "string", "null"], description: "A number, or a numeric string (coerced). Needed by every type but `blank` and `notBlank`." },
      filterTo: { type: ["number", "string", "null"], description: "The upper bound of `inRange`." },
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
      filterType: { type: "string", enum: ["text", "number", "set"], description: "Each condition's filterType must equal it." },
      operator: { type: "string", enum: ["AND", "OR"] },
      conditions: {
        type: "array",
        minItems: 1,
        maxItems: MAX_CONDITIONS_PER_COLUMN,
        items: { oneOf: [schema("TextFilterModel"), schema("NumberFilterModel"), schema("SetFilterModel")] },
      },
    },
  },
  ColumnFilterModel: {
    description: "One column's filter model: text, number (`id` only), set, or combined.",
    oneOf: [schema("TextFilterModel"), schema("NumberFilterModel"), schema("SetFilterModel"), schema("CombinedFilterModel")],
  },
  FilterModel: {
    type: "object",
    description: `AG Grid's filterModel: a filter model per column, all ANDed; a null column is no filter. At most ${MAX_PREDICATES} conditions in all.`,
    additionalProperties: false,
    properties: Object.fromEntries(COLUMN_IDS.map((c) => [c, { oneOf: [schema("ColumnFilterModel"), { type: "null" }] }])),
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
    },
  },
};

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
      "Off by default. When the server is started with --api-keys-file or API_KEYS, every /api/* and /metrics request needs `Authorization: Bearer <key>`; /healthz and /readyz stay open.",
  },
};

/** Security of the key-protected operations: a key, or none when keys are off. */
const KEYED = [{ apiKey: [] }, {}];

/** The headers of every 200 of a data route. */
const DATA_HEADERS = { ETag: header("ETag"), "X-Snapshot-Id": header("XSnapshotId"), "Cache-Control": header("CacheControl"), Vary: header("Vary") };

/**
 * The document-level parts merged by @elysiajs/openapi into the served document: info,
 * servers, tags and every component; the paths come from the routes' `detail`.
 * @returns an OpenAPI 3.1 fragment (plain JSON)
 */
export function openApiDocumentation() {
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
    components: { schemas: SCHEMAS, responses: RESPONSES, headers: HEADERS, securitySchemes: SECURITY_SCHEMES },
    // The operations routes are described here whatever `detail` their routes carry (the
    // plugin lets these paths replace the ones it derives from the routes).
    paths: { "/readyz": { get: readyDoc }, "/metrics": { get: metricsDoc } },
  };
}

/** The GET /api/users operation's `detail`: parameters (both clients' spellings) and responses. */
export function getUsersDoc(maxPageSize: number) {
  const q = (name: string, schema: object, description: string) => ({ name, in: "query", required: false, schema, description });
  const filter = (column: string, description: string, example: string) => ({
    ...q(`filter[${column}]`, { type: "string", maxLength: MAX_FILTER_LENGTH }, description),
    example,
  });
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
      q("sortBy", schema("ColumnId"), "Column to sort by; without it rows come in id order."),
      q("sort", schema("ColumnId"), "Another spelling of sortBy."),
      q("sortOrder", { type: "string", enum: ["asc", "desc"], default: "asc" }, "Sort direction; any case (`DESC`)."),
      q("order", { type: "string", enum: ["asc", "desc"] }, "Another spelling of sortOrder."),
      filter("id", '"42": equals; "10,50": inclusive range, either side may be empty ("10,", ",50").', "10,50"),
      filter("name", "Substring, case- and accent-insensitive.", "jose"),
      filter("email", "Substring, case- and accent-insensitive.", "example.com"),
      filter("status", "A value, or a comma list meaning any of them; any case.", "active,inactive"),
      { name: "If-None-Match", in: "header", required: false, schema: { type: "string" }, description: "An ETag of an earlier answer: 304 while it is current." },
    ],
    responses: {
      200: { description: "A page of users", headers: DATA_HEADERS, content: { "application/json": { schema: schema("GetUsersResponse") } } },
      304: response("NotModified"),
      400: response("BadRequest"),
      401: response("Unauthorized"),
      405: response("MethodNotAllowed"),
      500: response("InternalError"),
    },
  };
}

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
        headers: { ETag: header("ETag"), "X-Snapshot-Id": header("XSnapshotId"), Vary: header("Vary") },
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
