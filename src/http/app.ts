/**
 * The HTTP layer: the routes of docs/api.md — GET and POST /api/users, /healthz, /readyz,
 * /metrics, the OpenAPI document and UI — and how Bun serves them. The engine and store know
 * nothing of HTTP; this module parses, executes and writes pre-serialized JSON, and turns every
 * failure into problem+json. The data and operations handlers are plain functions
 * ({@link usersHandlers}, {@link operationsHandlers}) that Bun's router calls inside the
 * envelope (envelope.ts) with no framework layer in between; the Elysia app carries the OpenAPI
 * document and serves the rest ({@link createService}).
 */
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import type { Logger } from "pino";
import { type Engine, type Page, executeQuery, filterCacheKey } from "../engine/execute.ts";
import { DeferredQueue, isExpensive } from "../engine/scheduler.ts";
import { ProblemError } from "../query/errors.ts";
import { parseGetQuery } from "../query/get.ts";
import { parsePostBody } from "../query/post.ts";
import type { Query } from "../query/types.ts";
import type { ApiKeyCheck } from "./api-keys.ts";
import { CLIENT_ABORT_MESSAGE, isClientAbort, readBodyLimited } from "./body.ts";
import { type Coding, acceptsGzip, negotiateCoding } from "./compress.ts";
import { computeFacets } from "../engine/facets.ts";
import { openExport } from "../engine/export.ts";
import { type ExportRequest, parseExportGet, parseExportPost } from "../query/export.ts";
import { type FacetQuery, parseFacetsGet, parseFacetsPost } from "../query/facets.ts";
import { exportResponse, facetsResponse } from "./export-response.ts";
import { entityTag } from "./conditional.ts";
import type { CorsPolicy } from "./cors.ts";
import { type Handler, type RouteSpec, allowOf, createEnvelope, genericHandler, internalErrorResponse, pathOf } from "./envelope.ts";
import type { ServerMetrics } from "./metrics.ts";
import {
  documentFor,
  getExportDoc,
  getFacetsDoc,
  getUsersDoc,
  healthDoc,
  metricsDoc,
  openApiDocumentation,
  postExportDoc,
  postFacetsDoc,
  postUsersDoc,
  readyDoc,
  schemaDoc,
} from "./openapi-doc.ts";
import { JSON_HEADERS, getResponse, notModified, postResponse, problemResponse, schemaResponse, textResponse } from "./responses.ts";
import { staticAssetsPlugin } from "./static-assets.ts";

/**
 * Largest POST body, in bytes (docs/api.md "POST /api/users": at most 64 KiB; "HTTP envelope",
 * Limits: it holds while the body streams in, see body.ts).
 */
export const MAX_BODY_BYTES = 64 * 1024;

/** Default largest page size / row window, in rows (docs/api.md: default max 1000). */
export const DEFAULT_MAX_PAGE_SIZE = 1000;

/** A server's state: /readyz answers 200 only when "ready" (docs/api.md "HTTP envelope", Operations). */
export type ServerState = "starting" | "ready" | "draining";

/** Options of {@link createApp}. */
export interface AppOptions {
  /** The engine serving now; called per request so a reload can swap it. */
  engine: () => Engine;
  /** Largest page size / row window, in rows. */
  maxPageSize: number;
  logger: Logger;
  /** Extra routes (the demo page) mounted on the app. */
  plugins?: Elysia<any>[];
  /** Allowed CORS origins; null or absent: CORS off. */
  cors?: CorsPolicy | null;
  /** API keys for /api/* and /metrics; null or absent: keys off. */
  apiKeys?: ApiKeyCheck | null;
  /** The server's metrics, served at /metrics; null or absent: none (/metrics is a 404 problem). */
  metrics?: ServerMetrics | null;
  /** The server's state, for /readyz and `Connection: close` while draining; absent: always "ready". */
  state?: () => ServerState;
  /** When the snapshot serving now was built (its header's `createdAt`, ISO 8601); absent: unknown. */
  snapshotCreatedAt?: () => string;
  /**
   * More fields for /healthz and /readyz (a replica's `source`: its last poll and staleness,
   * docs/operations.md); absent: none.
   */
  status?: () => Record<string, unknown>;
}

/** True for a content type that is JSON (`application/json`, `application/*+json`, any parameters). */
function isJsonType(contentType: string): boolean {
  const media = contentType.split(";")[0].trim().toLowerCase();
  return media === "application/json" || (media.startsWith("application/") && media.endsWith("+json"));
}

/** The /api/users handlers: a Request in, a Response out, every failure a problem+json response. */
export interface UsersHandlers {
  /**
   * GET /api/users (docs/api.md "GET /api/users"): a Response at once, or a promise of one
   * when the query is queued as expensive (engine/scheduler.ts). A 200 carries `ETag`,
   * `X-Snapshot-Id` and `Cache-Control: no-cache`; a matching `If-None-Match` answers 304
   * without running the query (docs/api.md "HTTP envelope", Conditional GET).
   */
  get: (request: Request) => Response | Promise<Response>;
  /**
   * POST /api/users (docs/api.md "POST /api/users"); reads the body (at most
   * {@link MAX_BODY_BYTES}, counted as it streams in), hence async. A 200 carries `ETag` and
   * `X-Snapshot-Id` (never a 304).
   */
  post: (request: Request) => Promise<Response>;
  /**
   * GET /api/users/schema (docs/api.md "Columns beyond the four"): the served snapshot's
   * columns, row count and snapshot id; `ETag` and 304s as for GET /api/users.
   */
  schema: (request: Request) => Response;
  /**
   * GET /api/users/facets (docs/api.md "Facets"): per column, counts or the range over the
   * rows matching every filter but the column's own; `ETag` and 304s as for GET /api/users.
   */
  facetsGet: (request: Request) => Response | Promise<Response>;
  /** POST /api/users/facets: {@link facetsGet} from a JSON body; `ETag`, never a 304. */
  facetsPost: (request: Request) => Promise<Response>;
  /**
   * GET /api/users/export (docs/api.md "Export"): every matching row in order, CSV or NDJSON,
   * streamed with back-pressure; `ETag` and 304s as for GET /api/users.
   */
  exportGet: (request: Request) => Response | Promise<Response>;
  /** POST /api/users/export: {@link exportGet} from a JSON body; never a 304. */
  exportPost: (request: Request) => Promise<Response>;
}

/** Decodes POST bodies (UTF-8, a BOM dropped, bad bytes as U+FFFD; stateless between calls). */
const bodyDecoder = new TextDecoder();

/** Route numbers of the entity tags (conditional.ts `entityTag`): each body shape its own tags. */
const TAG_ROUTE = { getUsers: 1, postUsers: 2, schema: 3, getFacets: 4, postFacets: 5, getExport: 6, postExport: 7 } as const;

/** The filter's cache key of a query (cached per predicate tree, so the engine reuses it), or "". */
function filterKeyOf(query: Query): string {
  return query.filter === null ? "" : filterCacheKey(query.filter);
}

/** A query's sort keys as text for the entity tag, e.g. `status+,name-,id+a,`. */
function sortText(query: Query): string {
  let text = "";
  for (const key of query.sort) text += `${key.column}${key.direction === "desc" ? "-" : "+"}${key.absolute ? "a" : ""},`;
  return text;
}

/**
 * The handlers of /api/users, free of the framework so that Bun's router calls them directly
 * (see {@link createService}); the Elysia routes call the same functions.
 */
export function usersHandlers(options: Pick<AppOptions, "engine" | "maxPageSize" | "logger">): UsersHandlers {
  const { maxPageSize, logger } = options;
  // Expensive queries (an uncached substring filter, say) wait their turn here, so that cheap
  // ones, answered at once, are not held up behind them (engine/scheduler.ts).
  const queue = new DeferredQueue();
  const fail = (request: Request, error: unknown, coding: Coding | null): Response => {
    if (!(error instanceof ProblemError)) return internalErrorResponse(logger, error, request);
    // The rest of a body over the limit is not read: the connection cannot carry another request.
    const headers: Record<string, string> = error.code === "PAYLOAD_TOO_LARGE" ? { connection: "close" } : {};
    return problemResponse(error.code, error.detail, error.errors, headers, {}, coding);
  };
  const answer = (request: Request, engine: Engine, query: Query, coding: Coding | null, respond: (page: Page) => Response): Response | Promise<Response> => {
    if (!isExpensive(engine, query)) return respond(executeQuery(engine, query));
    return queue.run(() => respond(executeQuery(engine, query))).catch((error: unknown) => fail(request, error, coding));
  };
  const get = (request: Request): Response | Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const url = request.url;
      const q = url.indexOf("?");
      const engine = options.engine();
      const parsed = parseGetQuery(q < 0 ? "" : url.slice(q + 1), maxPageSize, engine.store.schema);
      const snapshotId = engine.store.snapshotId;
      const metaJson = JSON.stringify(parsed.meta);
      // The page, page size and `meta` (the sort and filters, normalized) are what a GET body
      // depends on besides the snapshot; the filter's key covers any filter `meta` does not echo.
      const etag = entityTag(snapshotId, coding, TAG_ROUTE.getUsers, parsed.page, parsed.pageSize, metaJson, filterKeyOf(parsed.query));
      const unchanged = notModified(request, etag, snapshotId);
      if (unchanged !== null) return unchanged;
      return answer(request, engine, parsed.query, coding, (page) => getResponse(engine.store, page.rows, page.total, parsed, metaJson, etag, coding));
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  /** The request's JSON body (`{}` when empty), or the problem answer: 415, 413, a client gone mid-body, malformed JSON. */
  const readJson = async (request: Request, coding: Coding | null): Promise<{ body: unknown } | Response> => {
    const contentType = request.headers.get("content-type");
    if (contentType !== null && contentType.trim() !== "" && !isJsonType(contentType)) {
      return problemResponse("UNSUPPORTED_MEDIA_TYPE", `the body must be JSON (application/json), not ${contentType}`, [], {}, {}, coding);
    }
    let bytes: Uint8Array;
    try {
      bytes = await readBodyLimited(request, MAX_BODY_BYTES);
    } catch (error) {
      if (!isClientAbort(error)) throw error;
      // Routine on a network (a closed tab, a superseded AG Grid block): one short line, no stack.
      logger.info({ method: request.method, path: pathOf(request.url) }, CLIENT_ABORT_MESSAGE);
      return problemResponse("BAD_BODY", CLIENT_ABORT_MESSAGE, [], { connection: "close" }, {}, coding);
    }
    const text = bodyDecoder.decode(bytes);
    if (text.trim() === "") return { body: {} };
    try {
      return { body: JSON.parse(text) };
    } catch (error) {
      return problemResponse("MALFORMED_JSON", `the body is not valid JSON: ${(error as Error).message}`, [{ pointer: "", detail: "not valid JSON" }], {}, {}, coding);
    }
  };
  const post = async (request: Request): Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const read = await readJson(request, coding);
      if (read instanceof Response) return read;
      const engine = options.engine();
      const parsed = parsePostBody(read.body, maxPageSize, engine.store.schema);
      const snapshotId = engine.store.snapshotId;
      const { query } = parsed;
      const etag = entityTag(snapshotId, coding, TAG_ROUTE.postUsers, query.offset, query.limit, sortText(query), filterKeyOf(query));
      return await answer(request, engine, query, coding, (page) => postResponse(engine.store, page.rows, page.total, etag, coding));
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  /** Runs `work` at once, or in the deferred queue when its filter is expensive to evaluate now. */
  const scheduled = (request: Request, engine: Engine, filter: Query["filter"], coding: Coding | null, work: () => Response): Response | Promise<Response> => {
    if (!isExpensive(engine, { filter, sort: [], offset: 0, limit: 0 })) return work();
    return queue.run(work).catch((error: unknown) => fail(request, error, coding));
  };
  /** The facets answer of a parsed request (GET or POST): ETag over the whole request. */
  const facetsAnswer = (request: Request, engine: Engine, facets: FacetQuery, route: number, coding: Coding | null, conditional: boolean): Response | Promise<Response> => {
    const snapshotId = engine.store.snapshotId;
    const etag = entityTag(snapshotId, coding, route, facets.limit, 0, JSON.stringify([facets.columns, facets.search]), facets.filter === null ? "" : filterCacheKey(facets.filter));
    if (conditional) {
      const unchanged = notModified(request, etag, snapshotId);
      if (unchanged !== null) return unchanged;
    }
    return scheduled(request, engine, facets.filter, coding, () => facetsResponse(computeFacets(engine, facets), etag, snapshotId, coding));
  };
  const facetsGet = (request: Request): Response | Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const engine = options.engine();
      const facets = parseFacetsGet(searchOf(request.url), maxPageSize, engine.store.schema);
      return facetsAnswer(request, engine, facets, TAG_ROUTE.getFacets, coding, true);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  const facetsPost = async (request: Request): Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const read = await readJson(request, coding);
      if (read instanceof Response) return read;
      const engine = options.engine();
      const facets = parseFacetsPost(read.body, maxPageSize, engine.store.schema);
      return await facetsAnswer(request, engine, facets, TAG_ROUTE.postFacets, coding, false);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  /** The export answer of a parsed request: the match set made (queued when expensive), then streamed. */
  const exportAnswer = (request: Request, engine: Engine, parsed: ExportRequest, route: number, conditional: boolean): Response | Promise<Response> => {
    const header = request.headers.get("accept-encoding");
    const gzip = acceptsGzip(header);
    const snapshotId = engine.store.snapshotId;
    const etag = entityTag(snapshotId, gzip ? "gzip" : null, route, 0, 0, `${parsed.format}|${sortText(parsed.query)}`, filterKeyOf(parsed.query));
    if (conditional) {
      const unchanged = notModified(request, etag, snapshotId);
      if (unchanged !== null) return unchanged;
    }
    return scheduled(request, engine, parsed.query.filter, negotiateCoding(header), () => exportResponse(engine.store, openExport(engine, parsed.query), parsed.format, etag, gzip, logger));
  };
  const exportGet = (request: Request): Response | Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const engine = options.engine();
      const parsed = parseExportGet(searchOf(request.url), maxPageSize, engine.store.schema);
      return exportAnswer(request, engine, parsed, TAG_ROUTE.getExport, true);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  const exportPost = async (request: Request): Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const read = await readJson(request, coding);
      if (read instanceof Response) return read;
      const engine = options.engine();
      const parsed = parseExportPost(read.body, maxPageSize, engine.store.schema);
      return await exportAnswer(request, engine, parsed, TAG_ROUTE.postExport, false);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  const schema = (request: Request): Response => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const store = options.engine().store;
      const etag = entityTag(store.snapshotId, coding, TAG_ROUTE.schema, 0, 0, "", "");
      const unchanged = notModified(request, etag, store.snapshotId);
      if (unchanged !== null) return unchanged;
      return schemaResponse(store, etag, coding);
    } catch (error) {
      return fail(request, error, coding) as Response;
    }
  };
  return { get, post, schema, facetsGet, facetsPost, exportGet, exportPost };
}

/** The query string of a request URL, without its `?` ("" when none). */
function searchOf(url: string): string {
  const q = url.indexOf("?");
  return q < 0 ? "" : url.slice(q + 1);
}

/** The handlers of the operations routes (docs/api.md "HTTP envelope", Operations). */
export interface OperationsHandlers {
  /**
   * GET /healthz: 200 `{status: "ok", rows, snapshotId, createdAt, ageSeconds}` while the process
   * serves (liveness): the version serving and its age (seconds since it was built).
   */
  healthz: (request: Request) => Response;
  /**
   * GET /readyz: 200 `{status: "ready", rows, snapshotId, createdAt, ageSeconds}` once a snapshot is loaded and
   * serving; 503 problem+json while starting or draining (a load balancer stops sending).
   */
  readyz: (request: Request) => Response;
  /** GET /metrics: the Prometheus text format (404 problem when the server keeps no metrics). */
  metrics: (request: Request) => Promise<Response>;
}

/** The operations handlers, free of the framework like {@link usersHandlers}. */
export function operationsHandlers(options: Pick<AppOptions, "engine" | "metrics" | "state" | "snapshotCreatedAt" | "status">): OperationsHandlers {
  const summary = (status: string) => {
    const store = options.engine().store;
    const createdAt = options.snapshotCreatedAt?.();
    const more = options.status?.() ?? {};
    if (createdAt === undefined) return JSON.stringify({ status, rows: store.rowCount, snapshotId: store.snapshotId, ...more });
    const ageSeconds = Math.max(0, Math.floor((Date.now() - Date.parse(createdAt)) / 1000));
    return JSON.stringify({ status, rows: store.rowCount, snapshotId: store.snapshotId, createdAt, ageSeconds, ...more });
  };
  return {
    healthz: () => new Response(summary("ok"), { headers: JSON_HEADERS }),
    readyz(request) {
      const state = options.state?.() ?? "ready";
      if (state === "ready") return new Response(summary("ready"), { headers: JSON_HEADERS });
      const detail = state === "starting" ? "the server is starting: no snapshot is serving yet" : "the server is shutting down: send requests to another instance";
      return problemResponse("NOT_READY", detail, [], {}, { state, ...options.status?.() }, negotiateCoding(request.headers.get("accept-encoding")));
    },
    async metrics(request) {
      const coding = negotiateCoding(request.headers.get("accept-encoding"));
      if (options.metrics == null) return problemResponse("NOT_FOUND", "this server keeps no metrics", [], {}, {}, coding);
      const { body, contentType } = await options.metrics.exposition();
      return textResponse(body, 200, { "content-type": contentType, vary: "Accept-Encoding" }, coding);
    },
  };
}

/**
 * Builds the Elysia app: its routes describe the OpenAPI document, and serve `app.handle`
 * (tests) and the routes without a plain handler (the document, the docs UI, the plugins').
 * Routes: GET/POST /api/users, GET /healthz, /readyz, /metrics, GET /openapi (UI, assets served
 * locally), GET /openapi/json; everything else is a problem+json 404 or 405. Served by Bun
 * through {@link createService}.
 * @param users the /api/users handlers (default: made from `options`)
 * @param operations the /healthz, /readyz and /metrics handlers (default: made from `options`)
 */
export function createApp(options: AppOptions, users = usersHandlers(options), operations = operationsHandlers(options)) {
  const { maxPageSize, logger } = options;
  // The document describes the columns of the snapshot served now (a reload with another schema:
  // see createService's /openapi/json).
  const schema = options.engine().store.schema;
  const app = new Elysia()
    .use(
      // The document only: the docs UI page at /openapi is a built static asset (no inline script).
      openapi({ path: "/openapi", specPath: "/openapi/json", provider: null, documentation: openApiDocumentation(schema) as never }),
    )
    // The docs UI: /openapi and the Scalar bundle under /openapi/assets/ (scripts/build-assets.ts).
    .use(staticAssetsPlugin("docs"))
    .get("/healthz", ({ request }) => operations.healthz(request), { detail: healthDoc as never })
    .get("/readyz", ({ request }) => operations.readyz(request), { detail: readyDoc as never })
    .get("/metrics", ({ request }) => operations.metrics(request), { detail: metricsDoc as never })
    .get("/api/users", ({ request }) => users.get(request), { detail: getUsersDoc(maxPageSize, schema) as never })
    .post("/api/users", ({ request }) => users.post(request), { parse: "none", detail: postUsersDoc(maxPageSize) as never })
    .get("/api/users/schema", ({ request }) => users.schema(request), { detail: schemaDoc as never })
    .get("/api/users/facets", ({ request }) => users.facetsGet(request), { detail: getFacetsDoc(schema) as never })
    .post("/api/users/facets", ({ request }) => users.facetsPost(request), { parse: "none", detail: postFacetsDoc as never })
    .get("/api/users/export", ({ request }) => users.exportGet(request), { detail: getExportDoc(schema) as never })
    .post("/api/users/export", ({ request }) => users.exportPost(request), { parse: "none", detail: postExportDoc as never });
  for (const plugin of options.plugins ?? []) app.use(plugin);
  app.onError(({ code, error, request }) => {
    if (code === "NOT_FOUND") {
      const path = pathOf(request.url);
      const methods = app.routes.filter((r) => r.path === path).map((r) => r.method);
      const allow = methods.length > 0 ? allowOf(methods) : undefined;
      if (allow !== undefined && !allow.split(", ").includes(request.method)) {
        return problemResponse("METHOD_NOT_ALLOWED", `${request.method} is not allowed on ${path}; allowed: ${allow}`, [], { allow });
      }
      return problemResponse("NOT_FOUND", `no resource at ${path}`);
    }
    if (code === "PARSE") return problemResponse("MALFORMED_JSON", "the body could not be parsed", []);
    return internalErrorResponse(logger, error, request);
  });
  return app;
}

/** What Bun.serve needs to serve the app (see {@link createService}). */
export interface Service {
  /** The Elysia app: the OpenAPI document, and the routes it serves itself. */
  app: ReturnType<typeof createApp>;
  /** Bun.serve `routes`: path → method → handler inside the envelope, or a value Bun serves as it is. */
  routes: Record<string, Record<string, Handler> | unknown>;
  /** Bun.serve `fetch`: every request no route matched (404, 405, `OPTIONS`). */
  fetch: Handler;
}

/** Where the OpenAPI document is served. */
const OPENAPI_JSON = "/openapi/json";

/**
 * GET /openapi/json: the app's document while the served snapshot has the schema the app was
 * built with; after a reload to another schema, the same document with that schema's columns
 * (openapi-doc.ts `documentFor`), made once per snapshot.
 */
function openApiHandler(app: ReturnType<typeof createApp>, options: AppOptions): Handler {
  const builtFor = JSON.stringify(options.engine().store.schema);
  let cached: { snapshotId: string; body: string } | null = null;
  return async (request) => {
    const store = options.engine().store;
    const response = await app.handle(request);
    if (response.status !== 200 || JSON.stringify(store.schema) === builtFor) return response;
    if (cached === null || cached.snapshotId !== store.snapshotId) {
      const base = (await response.json()) as Record<string, unknown>;
      cached = { snapshotId: store.snapshotId, body: JSON.stringify(documentFor(base, store.schema, options.maxPageSize)) };
    }
    return new Response(cached.body, { headers: JSON_HEADERS });
  };
}

/** Methods of Elysia routes that Bun's router takes. */
const ROUTABLE_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

/**
 * Builds the app and the routes Bun serves it with. Every path gets the envelope (envelope.ts:
 * API keys, CORS, `OPTIONS`, 404/405, `Connection: close` while draining, metrics):
 * - /api/users, /healthz, /readyz and /metrics go from Bun's router straight to their plain
 *   handlers ({@link usersHandlers}, {@link operationsHandlers}): Elysia's per-request context,
 *   async wrapper and response mapping cost about as much as a cheap query;
 * - the other routes of the Elysia app (the OpenAPI document, the pages and their assets) go
 *   through `app.handle`, and get the generic security headers and compression (envelope.ts
 *   `genericHandler`); a value Bun serves itself (an HTML import) is passed as it is;
 * - anything else reaches `fetch`: 405 with `Allow` on a known path, 204 to `OPTIONS`, else 404
 *   (a path with a trailing slash too: Bun's router matches paths exactly).
 */
export function createService(options: AppOptions): Service {
  const users = usersHandlers(options);
  const operations = operationsHandlers(options);
  const app = createApp(options, users, operations);
  const direct: Record<string, Record<string, Handler>> = {
    "/api/users": { GET: users.get, POST: users.post },
    "/api/users/schema": { GET: users.schema },
    "/api/users/facets": { GET: users.facetsGet, POST: users.facetsPost },
    "/api/users/export": { GET: users.exportGet, POST: users.exportPost },
    "/healthz": { GET: operations.healthz },
    "/readyz": { GET: operations.readyz },
  };
  if (options.metrics != null) direct["/metrics"] = { GET: operations.metrics };

  const specs: RouteSpec[] = Object.entries(direct).map(([path, methods]) => ({ path, methods }));
  const passThrough: Record<string, unknown> = {};
  const byPath = new Map<string, Record<string, Handler>>();
  for (const route of app.routes) {
    const { path, method, handler } = route as { path: string; method: string; handler: unknown };
    if (path in direct || !ROUTABLE_METHODS.has(method)) continue;
    let methods = byPath.get(path);
    if (methods === undefined) {
      methods = {};
      byPath.set(path, methods);
    }
    if (path === OPENAPI_JSON && method === "GET") methods[method] = genericHandler(openApiHandler(app, options));
    else if (typeof handler === "function") methods[method] = genericHandler((request) => app.handle(request));
    else if (handler instanceof Response) methods[method] = genericHandler(() => handler.clone());
    else {
      // An HTML import: Bun bundles and serves it itself, outside any handler. The entry only
      // lists the method for Allow and preflights; it is never called.
      passThrough[path] = handler;
      methods[method] = () => new Response(null, { status: 500 });
    }
  }
  for (const [path, methods] of byPath) specs.push({ path, methods });

  const envelope = createEnvelope(
    {
      logger: options.logger,
      cors: options.cors ?? null,
      apiKeys: options.apiKeys ?? null,
      metrics: options.metrics ?? null,
      draining: options.state === undefined ? () => false : () => (options.state as () => ServerState)() === "draining",
    },
    specs,
  );
  const routes: Record<string, Record<string, Handler> | unknown> = {};
  for (const spec of specs) {
    if (spec.path in passThrough) {
      routes[spec.path] = passThrough[spec.path];
      continue;
    }
    const wrapped: Record<string, Handler> = {};
    for (const [method, handler] of Object.entries(spec.methods)) wrapped[method] = envelope.wrap(spec, handler);
    routes[spec.path] = wrapped;
  }
  return { app, routes, fetch: envelope.fallback };
}

