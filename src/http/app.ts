/**
 * The HTTP layer's routes (docs/api.md "Endpoints"): the data routes under `/api/<resource>`
 * (the listing's GET and POST, schema, facets, export, explain), the resource index `/api`,
 * `/healthz`, `/readyz`, `/metrics`, the OpenAPI document, the docs UI and the plugins' pages,
 * listed once in a route table (routes.ts) that the Elysia app ({@link createApp}), the
 * envelope (envelope.ts) and the OpenAPI document (each route's TypeBox declarations,
 * declarations.ts, read by @elysiajs/openapi) are all made from. The data
 * routes are the query service's (service/pipeline.ts: one pipeline from the credential's view
 * to the serialised answer, over one route description each, service/routes.ts); this layer
 * declares them, wraps them in the envelope and knows no engine internals.
 */
import type { Server } from "bun";
import { toOpenAPISchema, withHeaders } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { createBunRouteHandler } from "elysia/adapter/bun/compose";
import type { Logger } from "pino";
import { type AccessControl, seesEverything } from "../access/control.ts";
import type { Engine } from "../engine/execute.ts";
import { scopeSchema } from "../engine/scope-schema.ts";
import type { ChangeFeed } from "../events/change-feed.ts";
import type { QueryScheduler } from "../engine/scheduler.ts";
import type { Schema } from "../schema/kinds.ts";
import { type QueryRoute, type QueryService, createQueryService } from "../service/pipeline.ts";
import { negotiateCoding } from "../service/compress.ts";
import { JSON_HEADERS, problemResponse, textResponse } from "../service/responses.ts";
import { DATA_ROUTES, changesRoute } from "../service/routes.ts";
import type { ApiKeyCheck } from "./api-keys.ts";
import type { CorsPolicy } from "./cors.ts";
import { type Handler, type Served, createEnvelope, genericHandler } from "./envelope.ts";
import type { ServerMetrics } from "./metrics.ts";
import {
  KEYED_SECURITY,
  changesDoc,
  declaredModels,
  finishOperation,
  getExplainDoc,
  getExportDoc,
  getFacetsDoc,
  getRowsDoc,
  healthDoc,
  keyedDeclaration,
  metricsDoc,
  openApiDocument,
  postExplainDoc,
  postExportDoc,
  postFacetsDoc,
  postRowsDoc,
  readyDoc,
  resourceIndexDoc,
  schemaDoc,
} from "./declarations.ts";
import type { Declaration } from "./declarations.ts";
import { type ResourcePaths, resourcePaths } from "./resource.ts";
import { type DocContext, type PathRoutes, type Plugin, type Route, routesByPath } from "./routes.ts";
import { staticAssetsPlugin } from "./static-assets.ts";

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
  /** Extra routes (the demo page), served beside the API. */
  plugins?: readonly Plugin[];
  /** The resource name (resource.ts): the data routes are under `/api/<resource>`; default `users`. */
  resource?: string;
  /** Allowed CORS origins; null or absent: CORS off. */
  cors?: CorsPolicy | null;
  /** API keys for /api/* and /metrics; null or absent: keys off. */
  apiKeys?: ApiKeyCheck | null;
  /**
   * Access control (docs/api.md "Access control"): every keyed route needs a credential, and a
   * data route answers over the credential's role's view; when set, `apiKeys` is not used.
   * Null or absent: off.
   */
  access?: AccessControl | null;
  /** The server's metrics, served at /metrics; null or absent: none (/metrics is a 404 problem). */
  metrics?: ServerMetrics | null;
  /** The server's state, for /readyz and `Connection: close` while draining; absent: always "ready". */
  state?: () => ServerState;
  /** When the snapshot serving now was built (its header's `createdAt`, ISO 8601); absent: unknown. */
  snapshotCreatedAt?: () => string;
  /**
   * Where expensive queries run, in slices, bounded in number and time (engine/scheduler.ts;
   * docs/operations.md "Fair under load"); absent: one with the defaults (30 s, 1024 waiting).
   */
  scheduler?: QueryScheduler;
  /**
   * More fields for /healthz and /readyz (a replica's `source`: its last poll and staleness,
   * docs/operations.md); absent: none.
   */
  status?: () => Record<string, unknown>;
  /**
   * The query service answering the data routes (service/pipeline.ts); absent: one made from
   * these options. Given, its own engine, limits, scheduler and access control answer.
   */
  service?: QueryService;
  /** The change feed served at `/api/<resource>/changes` (events/change-feed.ts); null or absent: the route is not served. */
  changes?: ChangeFeed | null;
}

/**
 * The data routes' handlers: a Request (and, with access control, its grant) in, a Response
 * out (at once, or a promise of one when the request has a body or its query is queued as
 * expensive: engine/scheduler.ts), every failure a problem+json response. Each is the query
 * service (service/pipeline.ts) running one route description (service/routes.ts). Paths are
 * named here as for the default resource name (resource.ts): the routes are under
 * `/api/<resource>`.
 */
export interface DataHandlers {
  /**
   * GET /api/users (docs/api.md "GET /api/users"): a 200 carries `ETag`, `X-Snapshot-Id` and
   * `Cache-Control: no-cache`; a matching `If-None-Match` answers 304 without running the query
   * (docs/api.md "HTTP envelope", Conditional GET).
   */
  get: Handler;
  /**
   * POST /api/users (docs/api.md "POST /api/users"); reads the body (at most
   * MAX_BODY_BYTES, service/body.ts, counted as it streams in). A 200 carries `ETag` and
   * `X-Snapshot-Id` (never a 304).
   */
  post: Handler;
  /**
   * GET /api/users/schema (docs/api.md "Any users table: the schema"): the served snapshot's columns, row
   * count and snapshot id (a role's columns, and the rows it sees: docs/api.md "Access
   * control"); `ETag` and 304s as for GET /api/users.
   */
  schema: Handler;
  /**
   * GET /api/users/facets (docs/api.md "Facets"): per column, counts or the range over the
   * rows matching every filter but the column's own; `ETag` and 304s as for GET /api/users.
   */
  facetsGet: Handler;
  /** POST /api/users/facets: {@link facetsGet} from a JSON body; `ETag`, never a 304. */
  facetsPost: Handler;
  /**
   * GET /api/users/export (docs/api.md "Export"): every matching row in order, CSV or NDJSON,
   * streamed with back-pressure; `ETag` and 304s as for GET /api/users.
   */
  exportGet: Handler;
  /** POST /api/users/export: {@link exportGet} from a JSON body; never a 304. */
  exportPost: Handler;
  /**
   * GET /api/users/explain (docs/api.md "Explain"): GET /api/users's parameters, parsed by its
   * parser (the same errors), and `analyze`: `{query, plan}` without reading rows; with
   * analyze, the query runs (in the deferred queue when its plan is expensive) and every step
   * carries its rows and milliseconds. A weak `ETag` (`W/"…"`) and `X-Snapshot-Id`; a matching
   * `If-None-Match` answers 304 unless analyze asks for a run.
   */
  explainGet: Handler;
  /** POST /api/users/explain: {@link explainGet} from POST /api/users's body and `"analyze"`; never a 304. */
  explainPost: Handler;
  /**
   * GET /api/users/changes (docs/api.md "GET /api/users/changes"): the change feed's stream for
   * the request's role, resumed from its `Last-Event-ID`; 503 with `Retry-After` beyond
   * `--max-event-streams`; a 404 problem when the server has no feed.
   */
  changes: Handler;
}

/**
 * The query service of a server's options (service/pipeline.ts): `options.service` when given,
 * else one over its engine, page limit, scheduler and access control.
 * @throws Error for an invalid resource name (resource.ts)
 */
export function serviceOf(options: Pick<AppOptions, "engine" | "maxPageSize" | "logger" | "resource" | "scheduler" | "access" | "service">): QueryService {
  return (
    options.service ??
    createQueryService({
      engine: options.engine,
      maxPageSize: options.maxPageSize,
      logger: options.logger,
      resource: resourcePaths(options.resource).name,
      scheduler: options.scheduler,
      access: options.access ?? null,
    })
  );
}

/**
 * The handlers of the data routes: each the query service answering one route description
 * (service/routes.ts); with access control on, over the request's grant (the role's view:
 * access/view.ts).
 * @throws Error for an invalid resource name (resource.ts)
 */
export function dataHandlers(options: Pick<AppOptions, "engine" | "maxPageSize" | "logger" | "resource" | "scheduler" | "access" | "service" | "changes">): DataHandlers {
  const service = serviceOf(options);
  const on =
    <P>(route: QueryRoute<P>): Handler =>
    (request, grant) =>
      service.handle(route, request, grant);
  return {
    get: on(DATA_ROUTES.rowsGet),
    post: on(DATA_ROUTES.rowsPost),
    schema: on(DATA_ROUTES.schemaGet),
    facetsGet: on(DATA_ROUTES.facetsGet),
    facetsPost: on(DATA_ROUTES.facetsPost),
    exportGet: on(DATA_ROUTES.exportGet),
    exportPost: on(DATA_ROUTES.exportPost),
    explainGet: on(DATA_ROUTES.explainGet),
    explainPost: on(DATA_ROUTES.explainPost),
    changes: on(changesRoute(options.changes ?? null)),
  };
}

/** The handlers of the operations routes (docs/api.md "HTTP envelope", Operations). */
export interface OperationsHandlers {
  /**
   * GET /healthz: 200 `{status: "ok", rows, snapshotId, createdAt, ageSeconds}` while the process
   * serves (liveness): the version serving and its age (seconds since it was built). With access
   * control on, `{status: "ok"}` alone unless the credential's role sees every row and column.
   */
  healthz: (request: Request) => Response | Promise<Response>;
  /**
   * GET /readyz: 200 `{status: "ready", rows, snapshotId, createdAt, ageSeconds}` once a snapshot is loaded and
   * serving; 503 problem+json while starting or draining (a load balancer stops sending).
   */
  readyz: (request: Request) => Response | Promise<Response>;
  /** GET /metrics: the Prometheus text format (404 problem when the server keeps no metrics). */
  metrics: (request: Request) => Promise<Response>;
}

/**
 * The operations handlers, free of any framework like {@link dataHandlers}. With access control
 * on, the health bodies hold counts, ids and LSNs only for a credential whose role sees every
 * row and column (access/control.ts `seesEverything`); for anyone else `{status}` alone (a 503's
 * problem body its `state` alone), the status code the same for everyone (docs/api.md "Access control").
 */
export function operationsHandlers(options: Pick<AppOptions, "engine" | "metrics" | "state" | "snapshotCreatedAt" | "status" | "access">): OperationsHandlers {
  const access = options.access ?? null;
  /** `answer(full)` once it is known whether the request may see the full body. */
  const forCaller = (request: Request, answer: (full: boolean) => Response): Response | Promise<Response> => {
    if (access === null) return answer(true);
    const full = seesEverything(access, request, options.engine().store.schema);
    return full instanceof Promise ? full.then(answer) : answer(full);
  };
  const summary = (status: string, full: boolean) => {
    if (!full) return JSON.stringify({ status });
    const store = options.engine().store;
    const createdAt = options.snapshotCreatedAt?.();
    const more = options.status?.() ?? {};
    if (createdAt === undefined) return JSON.stringify({ status, rows: store.rowCount, snapshotId: store.snapshotId, ...more });
    const ageSeconds = Math.max(0, Math.floor((Date.now() - Date.parse(createdAt)) / 1000));
    return JSON.stringify({ status, rows: store.rowCount, snapshotId: store.snapshotId, createdAt, ageSeconds, ...more });
  };
  return {
    healthz: (request) => forCaller(request, (full) => new Response(summary("ok", full), { headers: JSON_HEADERS })),
    readyz(request) {
      const state = options.state?.() ?? "ready";
      if (state === "ready") return forCaller(request, (full) => new Response(summary("ready", full), { headers: JSON_HEADERS }));
      const detail = state === "starting" ? "the server is starting: no snapshot is serving yet" : "the server is shutting down: send requests to another instance";
      return forCaller(request, (full) => problemResponse("NOT_READY", detail, [], {}, full ? { state, ...options.status?.() } : { state }, negotiateCoding(request.headers.get("accept-encoding"))));
    },
    async metrics(request) {
      const coding = negotiateCoding(request.headers.get("accept-encoding"));
      if (options.metrics == null) return problemResponse("NOT_FOUND", "this server keeps no metrics", [], {}, {}, coding);
      const { body, contentType } = await options.metrics.exposition();
      return textResponse(body, 200, { "content-type": contentType, vary: "Accept-Encoding" }, coding);
    },
  };
}

/** Where the OpenAPI document is served (the docs UI page reads it there: scripts/build-assets.ts). */
export const OPENAPI_JSON = "/openapi/json";

/** The path of the resource index (docs/api.md "Resource name"). */
export const RESOURCE_INDEX = "/api";

/** Most documents the OpenAPI route keeps (one per set of columns shown: each role's). */
const MAX_DOCUMENTS = 64;

/**
 * GET /openapi/json: the document of `routes` for the snapshot serving now (declarations.ts),
 * made once per snapshot and set of columns, so that a reload to another schema describes its
 * columns. It lists the columns and their enum values, so it needs the API key like
 * `/api/users/schema`; with access control on (docs/api.md "Access control"), a credential, and
 * its data schemas show the columns of the credential's role (the grant the envelope hands it).
 */
function openApiHandler(routes: () => readonly Route[], options: AppOptions, paths: ResourcePaths, app: () => App | null): Handler {
  const documents = new Map<string, string>();
  let snapshotId = "";
  const documentOf = (schema: Schema): Response => {
    const store = options.engine().store;
    if (store.snapshotId !== snapshotId || documents.size >= MAX_DOCUMENTS) {
      documents.clear();
      snapshotId = store.snapshotId;
    }
    // the columns and their enum values (a restricted role's are those of its rows)
    const key = JSON.stringify(schema.columns.map((c) => [c.id, c.values ?? null]));
    let body = documents.get(key);
    if (body === undefined) {
      const context: DocContext = { schema, maxPageSize: options.maxPageSize, paths, access: options.access != null };
      body = JSON.stringify(openApiDocument(declaredDocument(app() ?? declare(new Elysia({ strictPath: true }), routesByPath(routes()), (_entry, handler) => handler), routes(), context), context));
      documents.set(key, body);
    }
    return new Response(body, { headers: JSON_HEADERS });
  };
  return (_request, grant) => {
    const engine = options.engine();
    if (grant === undefined) return documentOf(engine.store.schema);
    return documentOf(grant.view.base === engine.store.schema ? scopeSchema(engine, grant.view) : grant.view.schema);
  };
}

/**
 * GET /api: where the data routes are (`{resource, paths: {rows, schema, facets, export,
 * explain}, openapi}`), for a client that does not know the resource name (the demo page).
 */
function resourceIndexHandler(paths: ResourcePaths): Handler {
  const { name, ...routes } = paths;
  const body = JSON.stringify({ resource: name, paths: routes, openapi: OPENAPI_JSON });
  return () => new Response(body, { headers: JSON_HEADERS });
}

/**
 * The route table of a server (routes.ts): every route it answers, with its handler, its
 * TypeBox declarations for the OpenAPI document (declarations.ts) and whether it needs the API key.
 * - the data routes under `/api/<resource>` (docs/api.md "Resource name"), each needing the key;
 * - `/api` (the resource index), `/metrics` and the OpenAPI document (not in itself), needing
 *   the key; `/healthz`, `/readyz` open;
 * - the docs UI (its page and Scalar bundle), open, not in the document;
 * - the plugins' routes (the demo page), as they come.
 * @param app the Elysia app serving the table, whose declared routes the OpenAPI document
 *   describes; absent: the table declared on an app of its own
 * @throws Error for an invalid resource name (resource.ts), or as static-assets.ts `staticAssets`
 */
export function routeTable(options: AppOptions, app: () => App | null = () => null): Route[] {
  const paths = resourcePaths(options.resource);
  const data = dataHandlers(options);
  const operations = operationsHandlers(options);
  const dataRoute = (method: Route["method"], path: string, handler: Handler, operation: Route["operation"]): Route => ({ method, path, handler, operation, keyed: true });
  const routes: Route[] = [
    dataRoute("GET", paths.rows, data.get, getRowsDoc),
    dataRoute("POST", paths.rows, data.post, postRowsDoc),
    dataRoute("GET", paths.schema, data.schema, schemaDoc),
    dataRoute("GET", paths.facets, data.facetsGet, getFacetsDoc),
    dataRoute("POST", paths.facets, data.facetsPost, postFacetsDoc),
    dataRoute("GET", paths.export, data.exportGet, getExportDoc),
    dataRoute("POST", paths.export, data.exportPost, postExportDoc),
    dataRoute("GET", paths.explain, data.explainGet, getExplainDoc),
    dataRoute("POST", paths.explain, data.explainPost, postExplainDoc),
    ...(options.changes == null ? [] : [dataRoute("GET", paths.changes, data.changes, changesDoc)]),
    { method: "GET", path: RESOURCE_INDEX, handler: resourceIndexHandler(paths), operation: resourceIndexDoc, keyed: true },
    { method: "GET", path: "/healthz", handler: operations.healthz, operation: healthDoc, keyed: false },
    { method: "GET", path: "/readyz", handler: operations.readyz, operation: readyDoc, keyed: false },
    { method: "GET", path: "/metrics", handler: operations.metrics, operation: metricsDoc, keyed: true, wholeTable: true },
    { method: "GET", path: OPENAPI_JSON, handler: genericHandler(openApiHandler(() => routes, options, paths, app)), operation: null, keyed: true },
    ...staticAssetsPlugin("docs").routes,
    ...(options.plugins ?? []).flatMap((plugin) => plugin.routes),
  ];
  return routes;
}

/**
 * The server's Elysia app ({@link createApp}): every route of the {@link routeTable} declared
 * through Elysia (so that `listen` hands them to Bun's native router), each handler inside the
 * envelope (envelope.ts), and Elysia's not-found path answering what no route matched.
 */
export type App = Elysia<any, any, any, any, any, any, any>;

/**
 * The routes served ({@link routeTable}) as an Elysia app: each route declared with its
 * method and path, its handler inside the envelope (envelope.ts: API keys for the keyed routes,
 * CORS, `Connection: close` while draining, metrics) returning a `Response`, which Elysia hands
 * on without mapping; a request no route matches reaches Elysia's not-found error, answered by
 * the envelope's fallback: 405 with `Allow` on a known path, 204 to `OPTIONS`, else 404 (a path
 * with a trailing slash too: `strictPath`). Start it with `listen` (server.ts), or hand it a
 * bound socket ({@link adopt}).
 * @throws Error as {@link routeTable}, or when the table serves a method of a path twice
 */
export function createApp(options: AppOptions): App {
  let app: App | null = null;
  const table = routeTable(options, () => app);
  const access = options.access ?? null;
  const byPath = routesByPath(table);
  const envelope = createEnvelope(
    {
      logger: options.logger,
      cors: options.cors ?? null,
      apiKeys: access === null ? (options.apiKeys ?? null) : null,
      access: access === null ? null : { authorize: (request, need) => access.authorize(request, options.engine().store.schema, need) },
      metrics: options.metrics ?? null,
      draining: options.state === undefined ? () => false : () => (options.state as () => ServerState)() === "draining",
    },
    byPath,
  );
  const base = new Elysia({ strictPath: true, aot: true }).onError(({ code, request, error }) => {
    if (code === "NOT_FOUND") return envelope.fallback(request);
    return envelope.internalError(error, request);
  });
  const changesPath = resourcePaths(options.resource).changes;
  app = declare(base, byPath, (entry, handler) => (entry.path === changesPath ? withQueryToken(envelope.wrap(entry, handler)) : envelope.wrap(entry, handler)));
  return app;
}

/**
 * The change events' route takes its credential from an `access_token` query parameter too
 * (docs/api.md "GET /api/users/changes": a browser's EventSource cannot send headers, RFC 6750
 * §2.3): the request goes on with it as `Authorization: Bearer <token>` when it has none. Only
 * this route reads the parameter; the logs never show a query string (envelope.ts `pathOf`).
 */
function withQueryToken(served: Served): Served {
  return (request) => {
    if (request.headers.has("authorization")) return served(request);
    const token = new URL(request.url).searchParams.get("access_token");
    if (token === null || token === "") return served(request);
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${token}`);
    return served(new Request(request.url, { method: request.method, headers, signal: request.signal }));
  };
}

/**
 * Declares every route of `byPath` on `app`: its method and path, its handler (made by `wrap`
 * from the table's) answering with a Response, which Elysia passes on without mapping.
 */
function declare(app: App, byPath: readonly PathRoutes[], wrap: (entry: PathRoutes, handler: Handler) => Served): App {
  for (const entry of byPath) {
    for (const [method, handler] of Object.entries(entry.methods)) {
      const served = wrap(entry, handler);
      app.route(method, entry.path, ({ request }: Record<string, Request>) => served(request));
    }
  }
  return app;
}

/**
 * The document's paths and models as @elysiajs/openapi makes them (`toOpenAPISchema`) from the
 * routes `app` declares, each with its table route's TypeBox declarations for this context
 * (declarations.ts: query, headers, JSON body, answers by status with their headers, the key's
 * security and 401/403 when keyed) as its hooks, and the context's models as the app's
 * definitions; a route without declarations (the pages and their files) hidden. The hooks are
 * the document's only (copies: the served routes carry none, so Elysia validates nothing and
 * every error stays the service's problem+json). Each generated operation is then finished
 * (declarations.ts `finishOperation`: descriptions and media types).
 */
function declaredDocument(app: App, table: readonly Route[], context: DocContext): { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } } {
  const byRoute = new Map(table.map((route) => [`${route.method} ${route.path}`, route]));
  const declarations = new Map<string, Declaration>();
  const declared = {
    getGlobalRoutes: () =>
      (app as unknown as { getGlobalRoutes(): { method: string; path: string }[] }).getGlobalRoutes().map((route) => {
        const tableRoute = byRoute.get(`${route.method} ${route.path}`);
        if (tableRoute === undefined || tableRoute.operation === null) return { ...route, hooks: { detail: { hide: true } } };
        const own = tableRoute.operation(context);
        const declaration = tableRoute.keyed ? keyedDeclaration(own, context.access === true) : own;
        declarations.set(`${route.method.toLowerCase()} ${route.path}`, declaration);
        const response = Object.fromEntries(Object.entries(declaration.answers).map(([status, answer]) => [status, answer.headers === undefined ? answer.schema : withHeaders(answer.schema, answer.headers as never)]));
        const hooks = {
          detail: { ...declaration.detail, security: tableRoute.keyed ? KEYED_SECURITY : [] },
          ...(declaration.query === undefined ? {} : { query: declaration.query }),
          ...(declaration.headers === undefined ? {} : { headers: declaration.headers }),
          ...(declaration.body === undefined ? {} : { body: declaration.body.schema, parse: [{ fn: "json" }] }),
          response,
        };
        return { ...route, hooks };
      }),
    getGlobalDefinitions: () => ({ type: declaredModels(context) }),
  };
  const generated = toOpenAPISchema(declared as never, { methods: ["options", "head"], staticFile: false }) as unknown as { paths: Record<string, Record<string, Record<string, unknown>>>; components: { schemas: Record<string, unknown> } };
  for (const [path, operations] of Object.entries(generated.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const declaration = declarations.get(`${method} ${path}`);
      if (declaration !== undefined) operations[method] = finishOperation(operation, declaration);
    }
  }
  return generated;
}

/**
 * Serves `app` on a socket bound already (http/starting.ts's placeholder): its routes handed to
 * Bun's native router as Elysia's `listen` hands them (one compiled handler per method and path),
 * everything else to the app's `fetch`, so that the connections open on the socket carry on.
 */
export function adopt(app: App, server: Server<unknown>): void {
  app.compile();
  const routes: Record<string, Record<string, (request: Request) => unknown>> = {};
  for (const route of app.router.history) {
    if (typeof route.handler !== "function") continue;
    (routes[route.path] ??= {})[route.method] = createBunRouteHandler(app, route) as (request: Request) => unknown;
  }
  server.reload({ routes: routes as never, fetch: app.fetch });
}
