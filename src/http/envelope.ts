/**
 * The HTTP envelope (docs/api.md "HTTP envelope"): what every request gets whatever its route —
 * API key check, CORS headers and preflights, `OPTIONS`, 404 and 405, `Connection: close`
 * while draining, the request duration metric — as plain functions wrapped around each route's
 * handler inside the route Elysia declares (app.ts `createApp`), so that nothing but a
 * context object lies between Bun's native router and the handler. Conditional
 * requests and compression of the data routes live in the query service (service/pipeline.ts), which knows the
 * normalized request before running the query; the other routes (the OpenAPI document) get the
 * generic treatment here ({@link genericHandler}).
 */
import type { Logger } from "pino";
import { DENIAL_STATUS, type Denial, type Grant, type Need, isDenial } from "../access/control.ts";
import type { ApiKeyCheck } from "./api-keys.ts";
import { COMPRESS_MIN_BYTES, type Coding, compressBytes, isCompressible, negotiateCoding } from "../service/compress.ts";
import { type CorsPolicy, addCorsHeaders, allowedOrigin, isPreflight, preflightHeaders } from "./cors.ts";
import type { ServerMetrics } from "./metrics.ts";
import { internalErrorResponse, pathOf, problemResponse } from "../service/responses.ts";
import type { PathRoutes } from "./routes.ts";
import { HTML_SECURITY_HEADERS } from "./static-assets.ts";

/**
 * A route handler: a Request in, a Response out (at once, or later). With access control on, a
 * keyed route's handler gets the request's grant (access/control.ts: the role's view of the
 * table); otherwise none.
 */
export type Handler = (request: Request, grant?: Grant) => Response | Promise<Response>;

/** What the Elysia routes and the not-found answer call: a wrapped handler (the envelope's), a Request in, a Response out. */
export type Served = (request: Request) => Response | Promise<Response>;

/**
 * Access control as the envelope uses it (docs/api.md "Access control"): a request's grant or
 * denial for the data served now (access/control.ts `AccessControl.authorize`).
 */
export interface AccessGate {
  authorize(request: Request, need: Need): Grant | Denial | Promise<Grant | Denial>;
}

/** What the envelope of one server needs. */
export interface EnvelopeOptions {
  logger: Logger;
  /** Allowed origins, or null: CORS off (docs/api.md: off by default). */
  cors: CorsPolicy | null;
  /** API keys, or null: keys off (docs/api.md: off by default). */
  apiKeys: ApiKeyCheck | null;
  /** Access control, or null: off (docs/api.md "Access control"; when on, API keys are not used). */
  access: AccessGate | null;
  /** The server's metrics, or null for none. */
  metrics: ServerMetrics | null;
  /** True while the server drains (after SIGTERM): every answer then carries `Connection: close`. */
  draining: () => boolean;
}

/** Route label of the metrics for a path no route serves (bounded label values). */
export const OTHER_ROUTE = "other";

/**
 * True for a path no route serves that still needs `Authorization: Bearer <key>` when keys (or
 * access control) are on before it learns its 404 or 405 (docs/api.md "API keys": `/api/*`,
 * `/metrics` and the OpenAPI document), so that a client without a key learns nothing of the
 * API's paths. A served path needs one when its routes say so (routes.ts `Route.keyed`);
 * `OPTIONS` on any path never does (see {@link Envelope.fallback}).
 */
export function needsApiKey(path: string): boolean {
  return path === "/metrics" || path === "/api" || path.startsWith("/api/") || path === "/openapi/json";
}

/** The `Allow` value of a path's methods: each method, `HEAD` with `GET`, and `OPTIONS`. */
export function allowOf(methods: Iterable<string>): string {
  const set = new Set(methods);
  if (set.has("GET")) set.add("HEAD");
  set.add("OPTIONS");
  const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
  return [...set].sort((a, b) => order.indexOf(a) - order.indexOf(b)).join(", ");
}

/** An envelope: wraps handlers and answers what no route matches. */
export interface Envelope {
  /**
   * A route's handler wrapped: API key (when the path's routes need one), CORS,
   * `Connection: close` while draining, duration metric; a thrown error becomes a logged 500 problem.
   */
  wrap: (route: PathRoutes, handler: Handler) => Served;
  /**
   * The answer to a request no route matched (Elysia's not-found error, app.ts `createApp`): a known path with another
   * method is 405 with `Allow`, or 204 to `OPTIONS`, with or without a key (a CORS preflight
   * from an allowed origin gets the preflight headers); any other path (one with a trailing
   * slash too) is 404.
   */
  fallback: Served;
  /** A 500 problem with a request id, logged with the error (never a stack trace to the client). */
  internalError: (error: unknown, request: Request) => Response;
}

/**
 * Creates the envelope of one server.
 * @param routes every served path (for 405, `Allow`, preflights and the key check of a wrong method)
 */
export function createEnvelope(options: EnvelopeOptions, routes: readonly PathRoutes[]): Envelope {
  const { logger, cors, apiKeys, metrics, draining, access } = options;
  const allowByPath = new Map(routes.map((r) => [r.path, allowOf(Object.keys(r.methods))]));
  const keyedPaths = new Set(routes.filter((r) => r.keyed).map((r) => r.path));

  const internalError = (error: unknown, request: Request): Response => internalErrorResponse(logger, error, request);

  /** The 401 for a request without a valid key, or null when it may pass (RFC 6750 §3). */
  const unauthorized = (request: Request): Response | null => {
    if (apiKeys === null) return null;
    const verdict = apiKeys.check(request.headers.get("authorization"));
    if (verdict === "ok") return null;
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    if (verdict === "missing") {
      return problemResponse("UNAUTHORIZED", "this endpoint needs an API key: send Authorization: Bearer <key>", [], { "www-authenticate": "Bearer" }, {}, coding);
    }
    return problemResponse("UNAUTHORIZED", "the API key is not valid", [], { "www-authenticate": 'Bearer error="invalid_token"' }, {}, coding);
  };

  /** The answer to a refused credential: 401 with `WWW-Authenticate: Bearer`, 403, or 500 (docs/api.md "Access control"). */
  const denied = (request: Request, denial: Denial): Response => {
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    const status = DENIAL_STATUS[denial.denied];
    if (status === 401) {
      const challenge = denial.denied === "missing" ? "Bearer" : 'Bearer error="invalid_token"';
      return problemResponse("UNAUTHORIZED", denial.detail, [], { "www-authenticate": challenge }, {}, coding);
    }
    return problemResponse(status === 403 ? "FORBIDDEN" : "INTERNAL", denial.detail, [], {}, {}, coding);
  };

  /**
   * Answers with `proceed` given the request's grant, or answers its denial (finished); the
   * grant may come later (a JWT verified now).
   */
  const guarded = (gate: AccessGate, label: string, request: Request, started: number, need: Need, proceed: (grant: Grant) => Response | Promise<Response>): Response | Promise<Response> => {
    let outcome: Grant | Denial | Promise<Grant | Denial>;
    try {
      outcome = gate.authorize(request, need);
    } catch (error) {
      return finish(label, request, internalError(error, request), started);
    }
    const decide = (o: Grant | Denial): Response | Promise<Response> => (isDenial(o) ? finish(label, request, denied(request, o), started) : proceed(o));
    if (!(outcome instanceof Promise)) return decide(outcome);
    return outcome.then(decide, (error: unknown) => finish(label, request, internalError(error, request), started));
  };

  /** Headers every answer gets, and the duration metric. */
  const finish = (label: string, request: Request, response: Response, started: number): Response => {
    if (cors !== null) addCorsHeaders(cors, request.headers.get("origin"), response);
    if (draining()) response.headers.set("connection", "close");
    if (metrics !== null) metrics.observe(label, request.method, response.status, (performance.now() - started) / 1000);
    return response;
  };

  /** Runs `handler` and finishes its answer, sync or async; a thrown error or rejection becomes a 500. */
  const run = (label: string, request: Request, handler: Handler, started: number, grant?: Grant): Response | Promise<Response> => {
    let response: Response | Promise<Response>;
    try {
      response = handler(request, grant);
    } catch (error) {
      response = internalError(error, request);
    }
    if (response instanceof Promise) {
      return response.then(
        (r) => finish(label, request, r, started),
        (error: unknown) => finish(label, request, internalError(error, request), started),
      );
    }
    return finish(label, request, response, started);
  };

  const wrap = (route: PathRoutes, handler: Handler): Served => {
    const label = route.path;
    if (access !== null && route.keyed) {
      const need: Need = route.wholeTable ? "everything" : "data";
      return (request) => {
        const started = performance.now();
        return guarded(access, label, request, started, need, (grant) => run(label, request, handler, started, grant));
      };
    }
    if (apiKeys === null || !route.keyed) {
      return (request) => run(label, request, handler, performance.now());
    }
    return (request) => {
      const started = performance.now();
      const refused = unauthorized(request);
      return refused === null ? run(label, request, handler, started) : finish(label, request, refused, started);
    };
  };

  const fallback = (request: Request): Response | Promise<Response> => {
    const started = performance.now();
    const path = pathOf(request.url);
    const allow = allowByPath.get(path);
    const label = allow === undefined ? OTHER_ROUTE : path;
    const preflight = isPreflight(request);
    // OPTIONS answers with what the path allows (or a preflight) and no data: it needs no key.
    if (!preflight && request.method !== "OPTIONS" && (allow === undefined ? needsApiKey(path) : keyedPaths.has(path))) {
      if (access !== null) {
        // a credential first, as on the routes: a client without one learns nothing of the paths
        return guarded(access, label, request, started, "data", () => answerUnrouted(request, path, allow, label, started));
      }
      const refused = unauthorized(request);
      if (refused !== null) return finish(label, request, refused, started);
    }
    return answerUnrouted(request, path, allow, label, started);
  };

  /** 404, 405 with `Allow`, or 204 to `OPTIONS`, for a request no route's method matched (see {@link Envelope.fallback}). */
  const answerUnrouted = (request: Request, path: string, allow: string | undefined, label: string, started: number): Response => {
    const preflight = isPreflight(request);
    const coding = negotiateCoding(request.headers.get("accept-encoding"));
    if (allow === undefined) return finish(label, request, problemResponse("NOT_FOUND", `no resource at ${path}`, [], {}, {}, coding), started);
    if (request.method === "OPTIONS") {
      const origin = preflight && cors !== null ? allowedOrigin(cors, request.headers.get("origin")) : null;
      const methods = allow.replace(/, OPTIONS$/, "");
      // A preflight from an allowed origin gets the CORS answer; any other OPTIONS (CORS off,
      // another origin) learns the path's methods from Allow, and a browser refuses the request.
      const headers = origin !== null ? preflightHeaders(origin, methods) : { allow };
      const response = new Response(null, { status: 204, headers });
      if (draining()) response.headers.set("connection", "close");
      if (metrics !== null) metrics.observe(label, request.method, 204, (performance.now() - started) / 1000);
      return response;
    }
    const problem = problemResponse("METHOD_NOT_ALLOWED", `${request.method} is not allowed on ${path}; allowed: ${allow}`, [], { allow }, {}, coding);
    return finish(label, request, problem, started);
  };

  return { wrap, fallback, internalError };
}

/**
 * A handler for a route that is not over the data (the OpenAPI document, say): `serve`
 * answers, then an HTML page without a Content-Security-Policy gets
 * {@link HTML_SECURITY_HEADERS}, and a compressible body of 1 KiB or more that the route did not
 * encode or tag itself (a route with an ETag handles its representations) is compressed, with
 * `Vary: Accept-Encoding`.
 * @param serve answers the request
 */
export function genericHandler(serve: Handler): Handler {
  return (request, grant) => {
    const answered = serve(request, grant);
    return answered instanceof Promise ? answered.then((r) => finishGeneric(request, r)) : finishGeneric(request, answered);
  };
}

/** Security headers and compression of a generic answer (see {@link genericHandler}). */
function finishGeneric(request: Request, response: Response): Response | Promise<Response> {
  const headers = response.headers;
  const type = headers.get("content-type");
  if (type !== null && type.startsWith("text/html") && !headers.has("content-security-policy")) {
    for (const [name, value] of Object.entries(HTML_SECURITY_HEADERS)) headers.set(name, value);
  }
  if (!isCompressible(type) || headers.has("content-encoding") || headers.has("etag") || response.body === null || response.status === 204 || response.status === 304) return response;
  headers.append("vary", "Accept-Encoding");
  const coding = negotiateCoding(request.headers.get("accept-encoding"));
  if (coding === null) return response;
  return response.bytes().then((bytes) => compressedCopy(response, bytes, coding));
}

/** `response` with `bytes` compressed as its body when 1 KiB or more; otherwise the same bytes. */
function compressedCopy(response: Response, bytes: Uint8Array<ArrayBuffer>, coding: Coding): Response {
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  if (bytes.byteLength < COMPRESS_MIN_BYTES) return new Response(bytes, { status: response.status, headers });
  headers.set("content-encoding", coding);
  return new Response(compressBytes(bytes, coding), { status: response.status, headers });
}
