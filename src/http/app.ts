/**
 * The HTTP layer's routes (docs/api.md "Endpoints"): the data routes under `/api/<resource>`
 * (the listing's GET and POST, schema, facets, export, explain), the resource index `/api`,
 * `/healthz`, `/readyz`, `/metrics`, the OpenAPI document, the docs UI and the plugins' pages,
 * listed once in a route table (routes.ts) that Bun's router, the envelope (envelope.ts) and the
 * OpenAPI document (openapi-doc.ts) are all made from ({@link createService}). The handlers are
 * plain functions ({@link dataHandlers}, {@link operationsHandlers}) that Bun's router calls
 * inside the envelope with no framework layer in between; the engine and store know nothing of
 * HTTP. Each handler parses, executes and writes pre-serialized JSON, and turns every failure
 * into problem+json.
 */
import type { Server } from "bun";
import { Elysia } from "elysia";
import { createBunRouteHandler } from "elysia/adapter/bun/compose";
import type { Logger } from "pino";
import { type AccessControl, DENIAL_STATUS, type Denial, type Grant, isDenial } from "../access/control.ts";
import { requestQuery, scopedFacets, scopedQuery } from "../access/scope.ts";
import type { RoleView } from "../access/view.ts";
import { type Engine, type Page, execute, executeWork, extraRecords, filterCacheKey, filterCost, filterResultWork, isExpensive, planOf, rowCountOf, versionId } from "../engine/execute.ts";
import { type PrintedStep, printStep } from "../engine/plan.ts";
import { withinScope, withoutColumn } from "../query/columns.ts";
import type { Schema } from "../schema/kinds.ts";
import type { Projection } from "../store/record-fields.ts";
import { DEFER_ABOVE } from "../engine/planner.ts";
import { QueryScheduler, QueryStopped } from "../engine/scheduler.ts";
import { type Work, finish } from "../bits/work.ts";
import { ProblemError } from "../query/errors.ts";
import { parseGetQuery } from "../query/get.ts";
import { parsePostBody } from "../query/post.ts";
import type { Query } from "../query/types.ts";
import type { ApiKeyCheck } from "./api-keys.ts";
import { CLIENT_ABORT_MESSAGE, MAX_BODY_BYTES, isClientAbort, readBodyLimited } from "./body.ts";
import { type Coding, acceptsGzip, negotiateCoding } from "./compress.ts";
import { computeFacets } from "../engine/facets.ts";
import { exportCost, openExportWork } from "../engine/export.ts";
import { type ExportRequest, parseExportGet, parseExportPost } from "../query/export.ts";
import { type FacetQuery, parseFacetsGet, parseFacetsPost } from "../query/facets.ts";
import { exportResponse, facetsResponse } from "./export-response.ts";
import { entityTag } from "./conditional.ts";
import type { CorsPolicy } from "./cors.ts";
import { type Handler, type Served, createEnvelope, genericHandler, internalErrorResponse, pathOf } from "./envelope.ts";
import { parseExplainGet, parseExplainPost, printQuery } from "./explain.ts";
import type { ServerMetrics } from "./metrics.ts";
import {
  getExplainDoc,
  getExportDoc,
  getFacetsDoc,
  getRowsDoc,
  healthDoc,
  metricsDoc,
  openApiDocument,
  postExplainDoc,
  postExportDoc,
  postFacetsDoc,
  postRowsDoc,
  readyDoc,
  resourceIndexDoc,
  schemaDoc,
} from "./openapi-doc.ts";
import { type ResourcePaths, resourcePaths } from "./resource.ts";
import { JSON_HEADERS, explainResponse, getResponse, notModified, postResponse, problemResponse, schemaResponse, textResponse } from "./responses.ts";
import { type Plugin, type Route, routesByPath } from "./routes.ts";
import { staticAssetsPlugin } from "./static-assets.ts";

/** Default largest page size / row window, in rows (docs/api.md: default max 1000). */
export const DEFAULT_MAX_PAGE_SIZE = 1000;

/** A server's state: /readyz answers 200 only when "ready" (docs/api.md "HTTP envelope", Operations). */
export type ServerState = "starting" | "ready" | "draining";

/** Options of {@link createService}. */
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
}

/** True for a content type that is JSON (`application/json`, `application/*+json`, any parameters). */
function isJsonType(contentType: string): boolean {
  const media = contentType.split(";")[0].trim().toLowerCase();
  return media === "application/json" || (media.startsWith("application/") && media.endsWith("+json"));
}

/**
 * The data routes' handlers: a Request (and, with access control, its grant) in, a Response
 * out, every failure a problem+json response. Paths are named here as for the default resource
 * name (resource.ts): the routes are under `/api/<resource>`.
 */
export interface DataHandlers {
  /**
   * GET /api/users (docs/api.md "GET /api/users"): a Response at once, or a promise of one
   * when the query is queued as expensive (engine/scheduler.ts). A 200 carries `ETag`,
   * `X-Snapshot-Id` and `Cache-Control: no-cache`; a matching `If-None-Match` answers 304
   * without running the query (docs/api.md "HTTP envelope", Conditional GET).
   */
  get: (request: Request, grant?: Grant) => Response | Promise<Response>;
  /**
   * POST /api/users (docs/api.md "POST /api/users"); reads the body (at most
   * {@link MAX_BODY_BYTES}, counted as it streams in), hence async. A 200 carries `ETag` and
   * `X-Snapshot-Id` (never a 304).
   */
  post: (request: Request, grant?: Grant) => Promise<Response>;
  /**
   * GET /api/users/schema (docs/api.md "Columns beyond the four"): the served snapshot's
   * columns, row count and snapshot id (a role's columns, and the rows it sees: docs/api.md
   * "Access control"); `ETag` and 304s as for GET /api/users.
   */
  schema: (request: Request, grant?: Grant) => Response | Promise<Response>;
  /**
   * GET /api/users/facets (docs/api.md "Facets"): per column, counts or the range over the
   * rows matching every filter but the column's own; `ETag` and 304s as for GET /api/users.
   */
  facetsGet: (request: Request, grant?: Grant) => Response | Promise<Response>;
  /** POST /api/users/facets: {@link facetsGet} from a JSON body; `ETag`, never a 304. */
  facetsPost: (request: Request, grant?: Grant) => Promise<Response>;
  /**
   * GET /api/users/export (docs/api.md "Export"): every matching row in order, CSV or NDJSON,
   * streamed with back-pressure; `ETag` and 304s as for GET /api/users.
   */
  exportGet: (request: Request, grant?: Grant) => Response | Promise<Response>;
  /** POST /api/users/export: {@link exportGet} from a JSON body; never a 304. */
  exportPost: (request: Request, grant?: Grant) => Promise<Response>;
  /**
   * GET /api/users/explain (docs/api.md "Explain"): GET /api/users's parameters, parsed by its
   * parser (the same errors), and `analyze`: `{query, plan}` without reading rows; with
   * analyze, the query runs (in the deferred queue when its plan is expensive) and every step
   * carries its rows and milliseconds. A weak `ETag` (`W/"…"`) and `X-Snapshot-Id`; a matching
   * `If-None-Match` answers 304 unless analyze asks for a run.
   */
  explainGet: (request: Request, grant?: Grant) => Response | Promise<Response>;
  /** POST /api/users/explain: {@link explainGet} from POST /api/users's body and `"analyze"`; never a 304. */
  explainPost: (request: Request, grant?: Grant) => Promise<Response>;
}

/** Decodes POST bodies (UTF-8, a BOM dropped, bad bytes as U+FFFD; stateless between calls). */
const bodyDecoder = new TextDecoder();

/** Route numbers of the entity tags (conditional.ts `entityTag`): each body shape its own tags. */
const TAG_ROUTE = { getUsers: 1, postUsers: 2, schema: 3, getFacets: 4, postFacets: 5, getExport: 6, postExport: 7, getExplain: 8, postExplain: 9, analyzed: 10 } as const;

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

/** The part of a view the entity tag holds: its role, claims and policy ("" without access control). */
function viewTagOf(view: RoleView | null): string {
  return view === null ? "" : view.tag;
}

/** The members a view's records keep (null: every one). */
function projectionOf(view: RoleView | null): Projection | null {
  return view === null ? null : view.projection;
}

/**
 * A plan printed for a role limited to some rows: its root step alone. The steps below it are
 * evaluated over every row of the table, so their estimates and counts would tell the role of
 * rows it does not see; the root's are its own (its window, its rows), and the changes a live
 * replica merged are left unsaid for the same reason.
 */
function rootOnly(step: PrintedStep): PrintedStep {
  const { children: _children, ...root } = step;
  if (root.detail !== undefined) root.detail = root.detail.replace(/; merged with the changes since the snapshot: .*$/, "");
  return root;
}

/**
 * The handlers of the data routes, free of any framework so that Bun's router calls them
 * directly (see {@link createService}). With access control on, each gets the request's grant
 * (the role's view: access/view.ts) and answers over it: parsed against the role's schema (a
 * hidden column is an unknown one), the role's filter ANDed in (access/scope.ts), records cut
 * to its columns, entity tags per role and claims.
 */
export function dataHandlers(options: Pick<AppOptions, "engine" | "maxPageSize" | "logger" | "resource" | "scheduler" | "access">): DataHandlers {
  const { maxPageSize, logger } = options;
  /**
   * The view a request's grant gives over `engine`'s table (null: every row and column, access
   * control off), its grant made again when another schema was swapped in since it was made.
   * @throws ProblemError FORBIDDEN (or INTERNAL) when the principal has no view of the new schema
   */
  const viewFor = (grant: Grant | undefined, engine: Engine): RoleView | null => {
    if (grant === undefined) return null;
    if (grant.view.base === engine.store.schema) return grant.view;
    const again = options.access?.regrant(grant, engine.store.schema);
    if (again === undefined) return grant.view;
    if (isDenial(again)) throw new ProblemError(DENIAL_STATUS[again.denied] === 500 ? "INTERNAL" : "FORBIDDEN", again.detail);
    return again.view;
  };
  const resource = resourcePaths(options.resource).name;
  // Expensive queries (a search of frequent terms, a scan) run here in slices, so that cheap
  // ones, answered at once, are not held up behind them (engine/scheduler.ts).
  const scheduler = options.scheduler ?? new QueryScheduler();
  const fail = (request: Request, error: unknown, coding: Coding | null): Response => {
    if (error instanceof QueryStopped) return stoppedResponse(error, scheduler.timeoutMs, coding);
    if (!(error instanceof ProblemError)) return internalErrorResponse(logger, error, request);
    // The rest of a body over the limit is not read: the connection cannot carry another request.
    const headers: Record<string, string> = error.code === "PAYLOAD_TOO_LARGE" ? { connection: "close" } : {};
    return problemResponse(error.code, error.detail, error.errors, headers, {}, coding);
  };
  // A query is planned once: the plan's cost decides whether it waits its turn, and the same
  // plan runs (engine/planner.ts).
  const answer = (request: Request, engine: Engine, query: Query, coding: Coding | null, respond: (page: Page) => Response): Response | Promise<Response> => {
    const plan = planOf(engine, query);
    if (!isExpensive(plan)) return respond(execute(engine, plan, false));
    // the work holds this engine version and this plan: it answers from the state it started on
    return scheduler.submit(() => executeWork(engine, plan, false), request.signal).then(respond, (error: unknown) => fail(request, error, coding));
  };
  const get = (request: Request, grant?: Grant): Response | Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const url = request.url;
      const q = url.indexOf("?");
      const engine = options.engine();
      const view = viewFor(grant, engine);
      const parsed = parseGetQuery(q < 0 ? "" : url.slice(q + 1), maxPageSize, view === null ? engine.store.schema : view.schema);
      const snapshotId = versionId(engine);
      const metaJson = JSON.stringify(parsed.meta);
      // The page, page size and `meta` (the sort and filters, normalized) are what a GET body
      // depends on besides the snapshot and the role's view; the filter's key covers any filter
      // `meta` does not echo.
      const etag = entityTag(snapshotId, coding, TAG_ROUTE.getUsers, parsed.page, parsed.pageSize, metaJson, filterKeyOf(parsed.query), viewTagOf(view));
      const unchanged = notModified(request, etag, snapshotId);
      if (unchanged !== null) return unchanged;
      return answer(request, engine, scopedQuery(view, parsed.query), coding, (page) =>
        getResponse(engine.store, page.rows, page.total, parsed, metaJson, etag, coding, snapshotId, extraRecords(engine), projectionOf(view)),
      );
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
  const post = async (request: Request, grant?: Grant): Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const read = await readJson(request, coding);
      if (read instanceof Response) return read;
      const engine = options.engine();
      const view = viewFor(grant, engine);
      const parsed = parsePostBody(read.body, maxPageSize, view === null ? engine.store.schema : view.schema);
      const snapshotId = versionId(engine);
      const { query } = parsed;
      const etag = entityTag(snapshotId, coding, TAG_ROUTE.postUsers, query.offset, query.limit, sortText(query), filterKeyOf(query), viewTagOf(view));
      return await answer(request, engine, scopedQuery(view, query), coding, (page) => postResponse(engine.store, page.rows, page.total, etag, coding, snapshotId, extraRecords(engine), projectionOf(view)));
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  /**
   * Runs `work` to its end at once when `cost` (planner.ts units) is at most DEFER_ABOVE, else in
   * the scheduler, a slice at a time.
   */
  const scheduled = (request: Request, cost: number, coding: Coding | null, work: () => Work<Response>): Response | Promise<Response> => {
    if (cost <= DEFER_ABOVE) return finish(work());
    return scheduler.submit(work, request.signal).catch((error: unknown) => fail(request, error, coding));
  };
  /** The facets answer of a parsed request (GET or POST): ETag over the whole request and the role's view; counted within the role's rows. */
  const facetsAnswer = (request: Request, engine: Engine, view: RoleView | null, facets: FacetQuery, route: number, coding: Coding | null, conditional: boolean): Response | Promise<Response> => {
    const snapshotId = versionId(engine);
    const etag = entityTag(snapshotId, coding, route, facets.limit, 0, JSON.stringify([facets.columns, facets.search]), facets.filter === null ? "" : filterCacheKey(facets.filter), viewTagOf(view));
    if (conditional) {
      const unchanged = notModified(request, etag, snapshotId);
      if (unchanged !== null) return unchanged;
    }
    // the facets read the filter within the role's scope and, per column, the filter without the
    // column's own (the scope never dropped): each evaluated into the filter cache (in slices when
    // expensive), then counted from there
    const scoped = scopedFacets(view, facets);
    const filters = [withinScope(scoped.scope, scoped.filter), ...scoped.columns.map((column) => withinScope(scoped.scope, withoutColumn(scoped.filter, column)))];
    if (scoped.scope !== null && scoped.scope !== undefined) filters.push(scoped.scope);
    let cost = 0;
    for (const filter of filters) cost += filterCost(engine, filter);
    return scheduled(request, cost, coding, function* () {
      for (const filter of filters) yield* filterResultWork(engine, filter);
      return facetsResponse(computeFacets(engine, scoped), etag, snapshotId, coding);
    });
  };
  const facetsGet = (request: Request, grant?: Grant): Response | Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const engine = options.engine();
      const view = viewFor(grant, engine);
      const facets = parseFacetsGet(searchOf(request.url), maxPageSize, view === null ? engine.store.schema : view.schema);
      return facetsAnswer(request, engine, view, facets, TAG_ROUTE.getFacets, coding, true);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  const facetsPost = async (request: Request, grant?: Grant): Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const read = await readJson(request, coding);
      if (read instanceof Response) return read;
      const engine = options.engine();
      const view = viewFor(grant, engine);
      const facets = parseFacetsPost(read.body, maxPageSize, view === null ? engine.store.schema : view.schema);
      return await facetsAnswer(request, engine, view, facets, TAG_ROUTE.postFacets, coding, false);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  /** The export answer of a parsed request: the match set made (queued when expensive), then streamed, cut to the role's view. */
  const exportAnswer = (request: Request, engine: Engine, view: RoleView | null, parsed: ExportRequest, route: number, conditional: boolean): Response | Promise<Response> => {
    const header = request.headers.get("accept-encoding");
    const gzip = acceptsGzip(header);
    const snapshotId = versionId(engine);
    const etag = entityTag(snapshotId, gzip ? "gzip" : null, route, 0, 0, `${parsed.format}|${sortText(parsed.query)}`, filterKeyOf(parsed.query), viewTagOf(view));
    if (conditional) {
      const unchanged = notModified(request, etag, snapshotId);
      if (unchanged !== null) return unchanged;
    }
    const query = scopedQuery(view, parsed.query);
    const shape = { version: snapshotId, schema: view === null ? engine.store.schema : view.schema, projection: projectionOf(view), extra: extraRecords(engine) };
    return scheduled(request, exportCost(engine, query), negotiateCoding(header), function* () {
      const cursor = yield* openExportWork(engine, query);
      return exportResponse(engine.store, cursor, parsed.format, etag, gzip, logger, resource, shape);
    });
  };
  const exportGet = (request: Request, grant?: Grant): Response | Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const engine = options.engine();
      const view = viewFor(grant, engine);
      const parsed = parseExportGet(searchOf(request.url), maxPageSize, view === null ? engine.store.schema : view.schema);
      return exportAnswer(request, engine, view, parsed, TAG_ROUTE.getExport, true);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  const exportPost = async (request: Request, grant?: Grant): Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const read = await readJson(request, coding);
      if (read instanceof Response) return read;
      const engine = options.engine();
      const view = viewFor(grant, engine);
      const parsed = parseExportPost(read.body, maxPageSize, view === null ? engine.store.schema : view.schema);
      return await exportAnswer(request, engine, view, parsed, TAG_ROUTE.postExport, false);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  const schema = (request: Request, grant?: Grant): Response | Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const engine = options.engine();
      const store = engine.store;
      const view = viewFor(grant, engine);
      const version = versionId(engine);
      const etag = entityTag(version, coding, TAG_ROUTE.schema, 0, 0, "", "", viewTagOf(view));
      const unchanged = notModified(request, etag, version);
      if (unchanged !== null) return unchanged;
      if (view === null || view.filter === null) return schemaResponse(store, etag, coding, version, rowCountOf(engine), view?.schema);
      // a role limited to some rows is told how many it sees (a live replica's changed rows
      // among them), never the table's count
      const count: Query = { filter: view.filter, sort: [], offset: 0, limit: 0 };
      return answer(request, engine, count, coding, (page) => schemaResponse(store, etag, coding, version, page.total, view.schema));
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  /**
   * The explain answer of a parsed listing request: the plan printed, or run first with analyze
   * (queued like the listing when its plan is expensive). `etag` is sent in its weak form; an
   * analyze run never answers 304 (its timings are the point).
   */
  const explainAnswer = (request: Request, engine: Engine, view: RoleView | null, query: Query, analyze: boolean, etag: string, coding: Coding | null, conditional: boolean): Response | Promise<Response> => {
    const snapshotId = versionId(engine);
    if (conditional && !analyze) {
      const unchanged = notModified(request, etag, snapshotId, `W/${etag}`);
      if (unchanged !== null) return unchanged;
    }
    // the query as the role asked it (its search restricted to its columns; the role's own filter is not the client's)
    const printed = printQuery(view === null ? engine.store.schema : view.schema, requestQuery(view, query));
    // One plan: the scheduler admits it by its cost, the executor runs it (recording each
    // step's rows and time), and the answer prints it with the path the executor took.
    const plan = planOf(engine, scopedQuery(view, query));
    // a role's own filter is not shown: the plan's root alone (its window and totals)
    const planned = () => (view === null || view.filter === null ? printStep(plan.root) : rootOnly(printStep(plan.root)));
    if (!analyze) return explainResponse({ query: printed, plan: planned() }, etag, snapshotId, coding);
    const respond = () => explainResponse({ query: printed, plan: planned() }, etag, snapshotId, coding);
    if (!isExpensive(plan)) {
      execute(engine, plan, true);
      return respond();
    }
    return scheduler.submit(() => executeWork(engine, plan, true), request.signal).then(respond, (error: unknown) => fail(request, error, coding));
  };
  const explainGet = (request: Request, grant?: Grant): Response | Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const engine = options.engine();
      const view = viewFor(grant, engine);
      const search = searchOf(request.url);
      const { request: parsed, analyze } = parseExplainGet(search, () => parseGetQuery(search, maxPageSize, view === null ? engine.store.schema : view.schema));
      const route = analyze ? TAG_ROUTE.getExplain + TAG_ROUTE.analyzed : TAG_ROUTE.getExplain;
      const etag = entityTag(versionId(engine), coding, route, parsed.page, parsed.pageSize, JSON.stringify(parsed.meta), filterKeyOf(parsed.query), viewTagOf(view));
      return explainAnswer(request, engine, view, parsed.query, analyze, etag, coding, true);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  const explainPost = async (request: Request, grant?: Grant): Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    try {
      const read = await readJson(request, coding);
      if (read instanceof Response) return read;
      const engine = options.engine();
      const view = viewFor(grant, engine);
      const { request: parsed, analyze } = parseExplainPost(read.body, () => parsePostBody(read.body, maxPageSize, view === null ? engine.store.schema : view.schema));
      const { query } = parsed;
      const route = analyze ? TAG_ROUTE.postExplain + TAG_ROUTE.analyzed : TAG_ROUTE.postExplain;
      const etag = entityTag(versionId(engine), coding, route, query.offset, query.limit, sortText(query), filterKeyOf(query), viewTagOf(view));
      return await explainAnswer(request, engine, view, query, analyze, etag, coding, false);
    } catch (error) {
      return fail(request, error, coding);
    }
  };
  return { get, post, schema, facetsGet, facetsPost, exportGet, exportPost, explainGet, explainPost };
}

/**
 * The answer to a query the scheduler stopped (docs/api.md "Fair under load"): 503 problem+json
 * with `code` `query_timeout` or `overloaded` and `Retry-After: 1`; for a client that went away,
 * a 499 nobody reads (counted in the metrics as such).
 * @param timeoutMs the server's query timeout, named in the detail
 */
function stoppedResponse(stopped: QueryStopped, timeoutMs: number, coding: Coding | null): Response {
  const retry = { "retry-after": "1" };
  switch (stopped.reason) {
    case "timeout":
      return problemResponse("QUERY_TIMEOUT", `the query ran longer than this server's limit of ${timeoutMs} ms and was stopped; try again, or narrow the filter or search`, [], retry, { code: "query_timeout" }, coding);
    case "overloaded":
      return problemResponse("OVERLOADED", "too many expensive queries are waiting on this server; try again shortly", [], retry, { code: "overloaded" }, coding);
    case "cancelled":
      return new Response(null, { status: CLIENT_CLOSED });
  }
}

/** The status recorded for a query whose client went away before its answer (nginx's 499). */
const CLIENT_CLOSED = 499;

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

/** The operations handlers, free of any framework like {@link dataHandlers}. */
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

/** Where the OpenAPI document is served (the docs UI page reads it there: scripts/build-assets.ts). */
export const OPENAPI_JSON = "/openapi/json";

/** The path of the resource index (docs/api.md "Resource name"). */
export const RESOURCE_INDEX = "/api";

/** Most documents the OpenAPI route keeps (one per set of columns shown: each role's). */
const MAX_DOCUMENTS = 64;

/**
 * GET /openapi/json: the document of `routes` for the snapshot serving now (openapi-doc.ts),
 * made once per snapshot and set of columns, so that a reload to another schema describes its
 * columns. It lists the columns and their enum values, so it needs the API key like
 * `/api/users/schema`; with access control on (docs/api.md "Access control"), a credential, and
 * its data schemas show the columns of the credential's role (the grant the envelope hands it).
 */
function openApiHandler(routes: () => readonly Route[], options: AppOptions, paths: ResourcePaths): Handler {
  const documents = new Map<string, string>();
  let snapshotId = "";
  const documentOf = (schema: Schema): Response => {
    const store = options.engine().store;
    if (store.snapshotId !== snapshotId || documents.size >= MAX_DOCUMENTS) {
      documents.clear();
      snapshotId = store.snapshotId;
    }
    const key = schema.columns.map((c) => c.id).join(",");
    let body = documents.get(key);
    if (body === undefined) {
      body = JSON.stringify(openApiDocument(routes(), { schema, maxPageSize: options.maxPageSize, paths, access: options.access != null }));
      documents.set(key, body);
    }
    return new Response(body, { headers: JSON_HEADERS });
  };
  return (_request, grant) => documentOf(grant === undefined ? options.engine().store.schema : grant.view.schema);
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
 * OpenAPI operation and whether it needs the API key.
 * - the data routes under `/api/<resource>` (docs/api.md "Resource name"), each needing the key;
 * - `/api` (the resource index), `/metrics` and the OpenAPI document (not in itself), needing
 *   the key; `/healthz`, `/readyz` open;
 * - the docs UI (its page and Scalar bundle), open, not in the document;
 * - the plugins' routes (the demo page), as they come.
 * @throws Error for an invalid resource name (resource.ts), or as static-assets.ts `staticAssets`
 */
export function routeTable(options: AppOptions): Route[] {
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
    { method: "GET", path: RESOURCE_INDEX, handler: resourceIndexHandler(paths), operation: resourceIndexDoc, keyed: true },
    { method: "GET", path: "/healthz", handler: operations.healthz, operation: healthDoc, keyed: false },
    { method: "GET", path: "/readyz", handler: operations.readyz, operation: readyDoc, keyed: false },
    { method: "GET", path: "/metrics", handler: operations.metrics, operation: metricsDoc, keyed: true, wholeTable: true },
    { method: "GET", path: OPENAPI_JSON, handler: genericHandler(openApiHandler(() => routes, options, paths)), operation: null, keyed: true },
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
  const table = routeTable(options);
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
  const app = new Elysia({ strictPath: true, aot: true }).onError(({ code, request, error }) => {
    if (code === "NOT_FOUND") return envelope.fallback(request);
    return envelope.internalError(error, request);
  });
  for (const entry of byPath) {
    for (const [method, handler] of Object.entries(entry.methods)) {
      const served = envelope.wrap(entry, handler);
      app.route(method, entry.path, ({ request }: { request: Request }) => served(request));
    }
  }
  return app;
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
