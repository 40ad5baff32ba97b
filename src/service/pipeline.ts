/**
 * The query service: the one path every data request takes (docs/api.md "Endpoints"), whatever
 * its route — credential's view → parse against the role's schema → version and entity tag →
 * 304 → scope → plan → admit (engine/scheduler.ts) → run → serialise. A route is a small
 * description ({@link QueryRoute}: how to parse its input, what its entity tag holds, what it
 * computes and how it answers; routes.ts lists the nine); this file holds the steps they share,
 * each once: the role's view and scope, the entity tag, the 304, the admission, the failure
 * answers. The HTTP layer (src/http) declares the routes and knows no engine internals; the
 * engine knows no HTTP.
 */
import type { Logger } from "pino";
import { type AccessControl, DENIAL_STATUS, type Grant, isDenial } from "../access/control.ts";
import { requestQuery, scopedFacets, scopedQuery } from "../access/scope.ts";
import type { RoleView } from "../access/view.ts";
import { type Work, finish } from "../bits/work.ts";
import { type Engine, type Page, execute, executeWork, filterCacheKey, isExpensive, planOf } from "../engine/execute.ts";
import { DEFER_ABOVE, type QueryPlan } from "../engine/planner.ts";
import { QueryScheduler, QueryStopped } from "../engine/scheduler.ts";
import { scopeSchema } from "../engine/scope-schema.ts";
import { type AnswerVersions, answerVersions, viewVersionCost, viewVersionWork } from "../engine/view-version.ts";
import { ProblemError } from "../query/errors.ts";
import type { FacetQuery } from "../query/facets.ts";
import type { Predicate, Query } from "../query/types.ts";
import type { Schema } from "../schema/kinds.ts";
import type { Projection } from "../store/record-fields.ts";
import { CLIENT_ABORT_MESSAGE, MAX_BODY_BYTES, isClientAbort, readBodyLimited } from "./body.ts";
import { type Coding, acceptsGzip, negotiateCoding } from "./compress.ts";
import { entityTag } from "./conditional.ts";
import { internalErrorResponse, notModified, pathOf, problemResponse } from "./responses.ts";

/** What the service needs of the server (server.ts). */
export interface ServiceOptions {
  /** The engine serving now; called per request so a reload can swap it. */
  engine: () => Engine;
  /** Largest page size / row window, in rows (docs/api.md "GET /api/users": default 1000). */
  maxPageSize: number;
  logger: Logger;
  /** The resource's name (docs/api.md "Resource name"), for the export's file name; default `users`. */
  resource?: string;
  /**
   * Where expensive queries run, in slices, bounded in number and time (engine/scheduler.ts;
   * docs/operations.md "Fair under load"); absent: one with the defaults.
   */
  scheduler?: QueryScheduler;
  /**
   * Access control's regrant (access/control.ts `AccessControl.regrant`): a grant made again
   * when another schema was swapped in since it was made; null or absent: access control off.
   */
  access?: Pick<AccessControl, "regrant"> | null;
}

/** Where a route's input comes from: the query string, a JSON body (POST), or nothing. */
export type RouteInput = "search" | "body" | "none";

/**
 * What an entity tag of an answer holds besides the version and the role's view
 * (conditional.ts `entityTag`): the route's number, two numbers and a text of the normalized
 * request, and the filter's cache key.
 */
export interface TagParts {
  /** The route's number (each body shape its own tags); see routes.ts `TAG_ROUTE`. */
  route: number;
  a: number;
  b: number;
  text: string;
  /** The filter's cache key ({@link filterKeyOf}), or "". */
  filterKey: string;
}

/**
 * One data route as the service runs it: parse, entity tag, compute and serialise. `P` is the
 * parsed request.
 */
export interface QueryRoute<P> {
  /** The route's name, e.g. `rows.get` (the service's spy and logs). */
  name: string;
  /** Where its input comes from. */
  input: RouteInput;
  /**
   * The request parsed against the role's schema (`input` is the query string without `?`, the
   * JSON body, or null).
   * @throws ProblemError for a bad request (400 problem+json)
   */
  parse: (input: unknown, schema: Schema, maxPageSize: number) => P;
  /** The entity tag's parts of the parsed request. */
  tag: (parsed: P) => TagParts;
  /**
   * Whether a matching `If-None-Match` answers 304 before any work (docs/api.md "HTTP envelope",
   * Conditional GET): the GET routes, explain without analyze.
   */
  conditional: (parsed: P) => boolean;
  /** True when the tag's coding is gzip or none (the export compresses as gzip only). */
  gzipTag?: boolean;
  /** True when the answer carries the tag in its weak form `W/"…"` (explain). */
  weak?: boolean;
  /** Computes and serialises the answer (its failures are the pipeline's to answer). */
  answer: (call: Call, parsed: P) => Response | Promise<Response>;
}

/** What a route's {@link QueryRoute.answer} gets: the request's state, and the shared steps. */
export interface Call {
  request: Request;
  /** The engine version this request answers from, start to end. */
  engine: Engine;
  /** The credential's view (null: access control off, every row and column). */
  view: RoleView | null;
  /**
   * The schema the request is parsed against and answered in: the role's (its enums' values
   * those of its rows unless declared: engine/scope-schema.ts), or the store's.
   */
  schema: Schema;
  /**
   * The version `X-Snapshot-Id` shows (engine/view-version.ts `answerVersions`): the engine's
   * version id, or for a role limited to some rows or columns the snapshot id without its LSN.
   */
  version: string;
  /**
   * The version the entity tag builds on and an export's file is named after: a restricted
   * role's token of its own rows (docs/api.md "Access control"), else {@link version}.
   */
  tagVersion: string;
  /** The answer's quoted entity tag (strong form). */
  etag: string;
  /** The negotiated coding of the answer, or null for none. */
  coding: Coding | null;
  /** The columns each record keeps (the role's), or null for every one. */
  projection: Projection | null;
  /** The resource's name. */
  resource: string;
  logger: Logger;
  /**
   * Scope → plan → admit → run: `query` within the role's rows, planned once; run at once when
   * cheap, else queued in the scheduler (the plan's cost decides); `respond` serialises the page.
   * @param analyze record each step's rows and milliseconds in the plan (explain's analyze)
   */
  run: (query: Query, analyze: boolean, respond: (page: Page, plan: QueryPlan) => Response) => Response | Promise<Response>;
  /**
   * True for a role limited to some rows: what it is told is counted within them, and a plan
   * is printed without the steps evaluated over the whole table (docs/api.md "Access control").
   */
  restricted: boolean;
  /**
   * True for a role that sees every row and column (or access control off): its answers may
   * tell of the whole table (a plan's every step, the snapshot id in `/schema`'s body).
   */
  seesAll: boolean;
  /** `query` within the role's rows (access/scope.ts `scopedQuery`; the query itself without access control). */
  scope: (query: Query) => Query;
  /** A facets request within the role's rows and columns (access/scope.ts `scopedFacets`). */
  scopeFacets: (facets: FacetQuery) => FacetQuery;
  /** `query` as the role asked it, for printing (access/scope.ts `requestQuery`: its search within its columns, its own filter not shown). */
  asked: (query: Query) => Query;
  /** The plan of `query` within the role's rows, without running it. */
  plan: (query: Query) => QueryPlan;
  /**
   * Runs `work` at once when `cost` (planner.ts units) is at most DEFER_ABOVE, else in the
   * scheduler, a slice at a time; a stopped query answers 503/499.
   */
  scheduled: (cost: number, work: () => Work<Response>) => Response | Promise<Response>;
}

/** The service: one entry for every data route. */
export interface QueryService {
  /**
   * Answers `request` on `route` over the credential's `grant` (absent: access control off).
   * A GET answers at once when its query is cheap, else a promise of the answer; every failure
   * is a problem+json answer.
   */
  handle: <P>(route: QueryRoute<P>, request: Request, grant?: Grant) => Response | Promise<Response>;
}

/** The filter's cache key of a query (cached per predicate tree, so the engine reuses it), or "". */
export function filterKeyOf(filter: Predicate | null): string {
  return filter === null ? "" : filterCacheKey(filter);
}

/** A query's sort keys as text for the entity tag, e.g. `status+,name-,id+a,`. */
export function sortText(query: Query): string {
  let text = "";
  for (const key of query.sort) text += `${key.column}${key.direction === "desc" ? "-" : "+"}${key.absolute ? "a" : ""},`;
  return text;
}

/** The status recorded for a query whose client went away before its answer (nginx's 499). */
const CLIENT_CLOSED = 499;

/** Decodes POST bodies (UTF-8, a BOM dropped, bad bytes as U+FFFD; stateless between calls). */
const bodyDecoder = new TextDecoder();

/** True for a content type that is JSON (`application/json`, `application/*+json`, any parameters). */
function isJsonType(contentType: string): boolean {
  const media = contentType.split(";")[0].trim().toLowerCase();
  return media === "application/json" || (media.startsWith("application/") && media.endsWith("+json"));
}

/** The query string of a request URL, without its `?` ("" when none). */
function searchOf(url: string): string {
  const q = url.indexOf("?");
  return q < 0 ? "" : url.slice(q + 1);
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

/**
 * Creates the service over the engine serving now. With access control on, each request's
 * grant gives the role's view (access/view.ts): parsed against the role's schema (a hidden
 * column is an unknown one), the role's filter ANDed in (access/scope.ts), records cut to its
 * columns, entity tags per role and claims.
 */
export function createQueryService(options: ServiceOptions): QueryService {
  const { maxPageSize, logger } = options;
  const resource = options.resource ?? "users";
  // Expensive queries (a search of frequent terms, a scan) run here in slices, so that cheap
  // ones, answered at once, are not held up behind them (engine/scheduler.ts).
  const scheduler = options.scheduler ?? new QueryScheduler();

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

  const fail = (request: Request, error: unknown, coding: Coding | null): Response => {
    if (error instanceof QueryStopped) return stoppedResponse(error, scheduler.timeoutMs, coding);
    if (!(error instanceof ProblemError)) return internalErrorResponse(logger, error, request);
    // The rest of a body over the limit is not read: the connection cannot carry another request.
    const headers: Record<string, string> = error.code === "PAYLOAD_TOO_LARGE" ? { connection: "close" } : {};
    return problemResponse(error.code, error.detail, error.errors, headers, {}, coding);
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

  /** Per role view: its version token being computed in the scheduler, for one engine version (requests of the view meanwhile wait on the same one). */
  const pendingTokens = new WeakMap<RoleView, { engine: Engine; versions: Promise<AnswerVersions> }>();

  /**
   * The versions of an answer over `view` in `engine`'s version (engine/view-version.ts
   * `answerVersions`): at once when its token is a look-up or cheap, else (the first request of
   * a large scope per snapshot) a promise of them, the token computed in the scheduler a slice
   * at a time so that other requests are answered meanwhile; one computation per view and
   * version, not stopped when a client waiting on it goes away (later requests use it).
   */
  const versionsFor = (engine: Engine, view: RoleView | null): AnswerVersions | Promise<AnswerVersions> => {
    if (view === null || viewVersionCost(engine, view) <= DEFER_ABOVE) return answerVersions(engine, view);
    const pending = pendingTokens.get(view);
    if (pending !== undefined && pending.engine === engine) return pending.versions;
    const versions = scheduler.submit(() => viewVersionWork(engine, view)).then((tag): AnswerVersions => ({ tag, shown: engine.store.snapshotId, restricted: true }));
    pendingTokens.set(view, { engine, versions });
    const forget = () => {
      if (pendingTokens.get(view)?.versions === versions) pendingTokens.delete(view);
    };
    versions.then(forget, forget);
    return versions;
  };

  /** The pipeline after the input is read: view → version → parse → tag → 304 → answer. */
  const serve = <P>(route: QueryRoute<P>, request: Request, grant: Grant | undefined, input: unknown, coding: Coding | null): Response | Promise<Response> => {
    const engine = options.engine();
    const view = viewFor(grant, engine);
    // what a restricted role's answers build on is a value of its own rows (docs/api.md "Access
    // control"); its schema (enum values of its rows) is kept per token
    const versions = versionsFor(engine, view);
    if (versions instanceof Promise) return versions.then((known) => answerWith(route, request, engine, view, input, known, coding));
    return answerWith(route, request, engine, view, input, versions, coding);
  };

  /** The pipeline once the versions are known: parse → tag → 304 → answer. */
  const answerWith = <P>(route: QueryRoute<P>, request: Request, engine: Engine, view: RoleView | null, input: unknown, versions: AnswerVersions, coding: Coding | null): Response | Promise<Response> => {
    const schema = scopeSchema(engine, view, versions.tag);
    const parsed = route.parse(input, schema, maxPageSize);
    const version = versions.shown;
    const parts = route.tag(parsed);
    const tagCoding = route.gzipTag === true ? (acceptsGzip(request.headers.get("accept-encoding")) ? "gzip" : null) : coding;
    const etag = entityTag(versions.tag, tagCoding, parts.route, parts.a, parts.b, parts.text, parts.filterKey, view === null ? "" : view.tag);
    if (route.conditional(parsed)) {
      const unchanged = notModified(request, etag, version, route.weak === true ? `W/${etag}` : etag);
      if (unchanged !== null) return unchanged;
    }
    const scope = (query: Query): Query => scopedQuery(view, query);
    const plan = (query: Query): QueryPlan => planOf(engine, scope(query));
    const call: Call = {
      request,
      engine,
      view,
      schema,
      version,
      tagVersion: versions.tag,
      etag,
      coding,
      projection: view === null ? null : view.projection,
      restricted: view !== null && view.filter !== null,
      seesAll: !versions.restricted,
      resource,
      logger,
      scope,
      scopeFacets: (facets) => scopedFacets(view, facets),
      asked: (query) => requestQuery(view, query),
      plan,
      // A query is planned once: the plan's cost decides whether it waits its turn, and the same
      // plan runs (engine/planner.ts); the work holds this engine version and this plan.
      run: (query, analyze, respond) => {
        const planned = plan(query);
        if (!isExpensive(planned)) return respond(execute(engine, planned, analyze), planned);
        return scheduler.submit(() => executeWork(engine, planned, analyze), request.signal).then(
          (page) => respond(page, planned),
          (error: unknown) => fail(request, error, coding),
        );
      },
      scheduled: (cost, work) => {
        if (cost <= DEFER_ABOVE) return finish(work());
        return scheduler.submit(work, request.signal).catch((error: unknown) => fail(request, error, coding));
      },
    };
    return route.answer(call, parsed);
  };

  const handle = <P>(route: QueryRoute<P>, request: Request, grant?: Grant): Response | Promise<Response> => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    if (route.input === "body") {
      return (async () => {
        try {
          const read = await readJson(request, coding);
          if (read instanceof Response) return read;
          return await serve(route, request, grant, read.body, coding);
        } catch (error) {
          return fail(request, error, coding);
        }
      })();
    }
    try {
      const answered = serve(route, request, grant, route.input === "search" ? searchOf(request.url) : null, coding);
      return answered instanceof Promise ? answered.catch((error: unknown) => fail(request, error, coding)) : answered;
    } catch (error) {
      return fail(request, error, coding);
    }
  };

  return { handle };
}
