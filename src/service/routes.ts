/**
 * The data routes as the query service runs them (pipeline.ts `QueryRoute`), one small
 * description each — how its input parses, what its entity tag holds, what it computes and how
 * it answers — for the listing (docs/api.md "GET /api/users", "POST /api/users"), the schema
 * (docs/api.md "Any users table: the schema"), facets (docs/api.md "Facets"), export (docs/api.md
 * "Export") and explain (docs/api.md "Explain"), GET and POST.
 */
import { extraRecords, rowCountOf } from "../engine/execute.ts";
import { exportWork, planExport } from "../engine/export.ts";
import { facetsWork, planFacets } from "../engine/facets.ts";
import { printScoped, printStep } from "../engine/plan.ts";
import type { QueryPlan } from "../engine/planner.ts";
import { type ExportRequest, parseExportGet, parseExportPost } from "../query/export.ts";
import { type FacetQuery, parseFacetsGet, parseFacetsPost } from "../query/facets.ts";
import { type GetRequest, parseGetQuery } from "../query/get.ts";
import { type PostRequest, parsePostBody } from "../query/post.ts";
import type { ChangeFeed } from "../events/change-feed.ts";
import { ProblemError } from "../query/errors.ts";
import type { Query } from "../query/types.ts";
import type { Schema } from "../schema/kinds.ts";
import { acceptsGzip } from "./compress.ts";
import { parseExplainGet, parseExplainPost, printQuery } from "./explain.ts";
import { exportResponse, facetsResponse } from "./export-response.ts";
import { type Call, type QueryRoute, type TagParts, filterKeyOf, sortText } from "./pipeline.ts";
import { PROBLEM_STATUS, type PageContext, explainResponse, getResponse, postResponse, problemResponse, schemaResponse } from "./responses.ts";

/** Route numbers of the entity tags (conditional.ts `entityTag`): each body shape its own tags. */
export const TAG_ROUTE = { getUsers: 1, postUsers: 2, schema: 3, getFacets: 4, postFacets: 5, getExport: 6, postExport: 7, getExplain: 8, postExplain: 9, analyzed: 10, changes: 11 } as const;

/** What a page's answer over `call` is written from (responses.ts `PageContext`). */
const pageContext = (call: Call): PageContext => ({ store: call.engine.store, etag: call.etag, coding: call.coding, version: call.version, extra: extraRecords(call.engine), projection: call.projection });

/** Always: a GET route's 304 needs nothing more than a matching tag. */
const always = (): boolean => true;
/** Never: a POST answers 200 (docs/api.md "HTTP envelope", Conditional GET). */
const never = (): boolean => false;

/** GET listing: a page of rows with `meta` (docs/api.md "GET /api/users"); `ETag`, 304s. */
export const rowsGet: QueryRoute<GetRequest & { metaJson: string }> = {
  name: "rows.get",
  input: "search",
  parse: (search, schema, maxPageSize) => {
    const parsed = parseGetQuery(search as string, maxPageSize, schema);
    return Object.assign(parsed, { metaJson: JSON.stringify(parsed.meta) });
  },
  // The page, page size and `meta` (the sort and filters, normalized) are what a GET body
  // depends on besides the version and the role's view; the filter's key covers any filter
  // `meta` does not echo.
  tag: (p) => ({ route: TAG_ROUTE.getUsers, a: p.page, b: p.pageSize, text: p.metaJson, filterKey: filterKeyOf(p.query.filter) }),
  conditional: always,
  answer: (call, p) =>
    call.run(p.query, false, (page) => getResponse(pageContext(call), page.rows, page.total, p, p.metaJson)),
};

/** POST listing: a row window and the total (docs/api.md "POST /api/users"); `ETag`, never a 304. */
export const rowsPost: QueryRoute<PostRequest> = {
  name: "rows.post",
  input: "body",
  parse: (body, schema, maxPageSize) => parsePostBody(body, maxPageSize, schema),
  tag: ({ query }) => ({ route: TAG_ROUTE.postUsers, a: query.offset, b: query.limit, text: sortText(query), filterKey: filterKeyOf(query.filter) }),
  conditional: never,
  answer: (call, { query }) =>
    call.run(query, false, (page) => postResponse(pageContext(call), page.rows, page.total)),
};

/**
 * GET schema: the columns the client sees, the row count and the version; a role limited to
 * some rows is told how many it sees (a live replica's changed rows among them), never the
 * table's count.
 */
export const schemaGet: QueryRoute<null> = {
  name: "schema.get",
  input: "none",
  parse: () => null,
  tag: () => ({ route: TAG_ROUTE.schema, a: 0, b: 0, text: "", filterKey: "" }),
  conditional: always,
  answer: (call) => {
    const { engine } = call;
    const store = engine.store;
    // the snapshot id in the body only for a role that sees everything (docs/api.md "Access control")
    if (!call.restricted) return schemaResponse(store, call.etag, call.coding, call.version, rowCountOf(engine), call.schema, call.seesAll);
    const count: Query = { filter: null, sort: [], offset: 0, limit: 0 };
    return call.run(count, false, (page) => schemaResponse(store, call.etag, call.coding, call.version, page.total, call.schema, false));
  },
};

/**
 * A request read from the query string (GET: a matching tag answers 304) or from a JSON body
 * (POST: never a 304), parsed into one shape, tagged and answered the same way but for its
 * route number: the two routes of facets and of export.
 */
function getAndPost<P>(route: {
  /** The routes' names are `<name>.get` and `<name>.post`. */
  name: string;
  parseGet: (search: string, maxPageSize: number, schema: Schema) => P;
  parsePost: (body: unknown, maxPageSize: number, schema: Schema) => P;
  /** The tag's parts for the route number `routeNumber` (GET's or POST's, {@link TAG_ROUTE}). */
  tag: (routeNumber: number, parsed: P) => TagParts;
  /** The GET's and the POST's route numbers. */
  routes: readonly [number, number];
  gzipTag?: boolean;
  answer: QueryRoute<P>["answer"];
}): { get: QueryRoute<P>; post: QueryRoute<P> } {
  const shared = { gzipTag: route.gzipTag, answer: route.answer };
  return {
    get: {
      name: `${route.name}.get`,
      input: "search",
      parse: (search, schema, maxPageSize) => route.parseGet(search as string, maxPageSize, schema),
      tag: (parsed) => route.tag(route.routes[0], parsed),
      conditional: always,
      ...shared,
    },
    post: {
      name: `${route.name}.post`,
      input: "body",
      parse: (body, schema, maxPageSize) => route.parsePost(body, maxPageSize, schema),
      tag: (parsed) => route.tag(route.routes[1], parsed),
      conditional: never,
      ...shared,
    },
  };
}

/**
 * Facets, GET or POST: per column, counts or the range over the rows matching every filter
 * but the column's own, within the role's rows. One plan (engine/facets.ts `planFacets`): its
 * cost decides whether it waits its turn, and the same plan runs, in pieces.
 */
function facetsAnswer(call: Call, facets: FacetQuery): Response | Promise<Response> {
  const { engine } = call;
  const plan = planFacets(engine, call.scopeFacets(facets));
  return call.scheduled(plan.estimatedCost, function* () {
    return facetsResponse(yield* facetsWork(engine, plan), call.etag, call.version, call.coding);
  });
}

/** Facets GET and POST: the whole request (columns, search, limit, filter) in the tag, within the role's view. */
const facets = getAndPost<FacetQuery>({
  name: "facets",
  parseGet: parseFacetsGet,
  parsePost: parseFacetsPost,
  tag: (route, f) => ({ route, a: f.limit, b: 0, text: JSON.stringify([f.columns, f.search]), filterKey: filterKeyOf(f.filter) }),
  routes: [TAG_ROUTE.getFacets, TAG_ROUTE.postFacets],
  answer: facetsAnswer,
});

/** GET facets (docs/api.md "Facets"); `ETag`, 304s. */
export const facetsGet: QueryRoute<FacetQuery> = facets.get;

/** POST facets: {@link facetsGet} from a JSON body; `ETag`, never a 304. */
export const facetsPost: QueryRoute<FacetQuery> = facets.post;

/** Export, GET or POST: the match set made within the role's rows (queued when expensive), then streamed, cut to its columns. */
function exportAnswer(call: Call, parsed: ExportRequest): Response | Promise<Response> {
  const { engine, request } = call;
  const plan = planExport(engine, call.scope(parsed.query));
  const gzip = acceptsGzip(request.headers.get("accept-encoding"));
  const shape = { version: call.version, file: call.tagVersion, schema: call.schema, projection: call.projection, extra: extraRecords(engine) };
  return call.scheduled(plan.estimatedCost, function* () {
    const cursor = yield* exportWork(engine, plan);
    return exportResponse(engine.store, cursor, parsed.format, call.etag, gzip, call.logger, call.resource, shape);
  });
}

/** Export GET and POST: its format, sort and filter in the tag (its coding gzip or none: `gzipTag`). */
const exports = getAndPost<ExportRequest>({
  name: "export",
  parseGet: parseExportGet,
  parsePost: parseExportPost,
  tag: (route, e) => ({ route, a: 0, b: 0, text: `${e.format}|${sortText(e.query)}`, filterKey: filterKeyOf(e.query.filter) }),
  routes: [TAG_ROUTE.getExport, TAG_ROUTE.postExport],
  gzipTag: true,
  answer: exportAnswer,
});

/** GET export (docs/api.md "Export"): every matching row in order, CSV or NDJSON; `ETag`, 304s. */
export const exportGet: QueryRoute<ExportRequest> = exports.get;

/** POST export: {@link exportGet} from a JSON body; never a 304. */
export const exportPost: QueryRoute<ExportRequest> = exports.post;

/**
 * Explain, GET or POST: the listing's request parsed by the listing's parser, and the plan the
 * listing would run — the same plan, printed by the engine (engine/plan.ts `printStep`: over a live replica's changes, what its window merges with);
 * with analyze it runs first (queued like the listing when expensive) and every step carries
 * its rows and milliseconds. A role's own filter is not shown; a role limited to some rows or
 * columns is shown its window alone (engine/plan.ts `printScoped`: nothing the whole table decides).
 */
function explainAnswer(call: Call, query: Query, analyze: boolean): Response | Promise<Response> {
  const { engine } = call;
  // the query as the role asked it (its search restricted to its columns; the role's own filter is not the client's)
  const printed = printQuery(call.schema, call.asked(query));
  const respondWith = (plan: QueryPlan) => {
    const steps = call.seesAll ? printStep(plan.root) : printScoped(plan.root);
    return explainResponse({ query: printed, plan: steps }, call.etag, call.version, call.coding);
  };
  if (!analyze) return respondWith(call.plan(query));
  return call.run(query, true, (_page, plan) => respondWith(plan));
}

/** GET explain: GET listing's parameters and `analyze`; a weak `ETag`, 304s unless analyze asks for a run. */
export const explainGet: QueryRoute<{ request: GetRequest; analyze: boolean }> = {
  name: "explain.get",
  input: "search",
  parse: (search, schema, maxPageSize) => parseExplainGet(search as string, () => parseGetQuery(search as string, maxPageSize, schema)),
  tag: ({ request: p, analyze }) => ({
    route: analyze ? TAG_ROUTE.getExplain + TAG_ROUTE.analyzed : TAG_ROUTE.getExplain,
    a: p.page,
    b: p.pageSize,
    text: JSON.stringify(p.meta),
    filterKey: filterKeyOf(p.query.filter),
  }),
  conditional: ({ analyze }) => !analyze,
  weak: true,
  answer: (call, { request, analyze }) => explainAnswer(call, request.query, analyze),
};

/** POST explain: POST listing's body and `"analyze"`; a weak `ETag`, never a 304. */
export const explainPost: QueryRoute<{ request: PostRequest; analyze: boolean }> = {
  name: "explain.post",
  input: "body",
  parse: (body, schema, maxPageSize) => parseExplainPost(body, () => parsePostBody(body, maxPageSize, schema)),
  tag: ({ request: { query }, analyze }) => ({
    route: analyze ? TAG_ROUTE.postExplain + TAG_ROUTE.analyzed : TAG_ROUTE.postExplain,
    a: query.offset,
    b: query.limit,
    text: sortText(query),
    filterKey: filterKeyOf(query.filter),
  }),
  conditional: never,
  weak: true,
  answer: (call, { request, analyze }) => explainAnswer(call, request.query, analyze),
};

/**
 * GET changes (docs/api.md "GET /api/users/changes"): `feed`'s Server-Sent Events stream for the
 * request's role (events/change-feed.ts), resumed after its `Last-Event-ID`; never a 304, no
 * entity tag of its own. Beyond `--max-event-streams`, 503 problem+json with `Retry-After`;
 * without a feed (a server with no live changes), a 404 problem.
 */
export function changesRoute(feed: ChangeFeed | null): QueryRoute<null> {
  return {
    name: "changes.get",
    input: "none",
    parse: () => null,
    tag: () => ({ route: TAG_ROUTE.changes, a: 0, b: 0, text: "", filterKey: "" }),
    conditional: never,
    answer: (call) => {
      if (feed === null) throw new ProblemError("NOT_FOUND", "this server has no change events");
      try {
        return feed.open(call.engine, call.view, call.request.headers.get("last-event-id"), call.request.signal);
      } catch (error) {
        if (error instanceof ProblemError && PROBLEM_STATUS[error.code] === 503) return problemResponse(error.code, error.detail, [], { "retry-after": "1" }, {}, call.coding);
        throw error;
      }
    },
  };
}

/** The nine data routes, by name. */
export const DATA_ROUTES = { rowsGet, rowsPost, schemaGet, facetsGet, facetsPost, exportGet, exportPost, explainGet, explainPost } as const;
