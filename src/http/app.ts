/**
 * The HTTP layer: an Elysia app serving GET and POST /api/users (INTERFACE.md), /healthz and
 * the OpenAPI document and UI. The engine and store know nothing of HTTP; this module parses,
 * executes and writes pre-serialized JSON, and turns every failure into problem+json. The two
 * /api/users handlers are plain functions ({@link usersHandlers}) that Bun's router calls with
 * no framework layer in between.
 */
import { openapi } from "@elysiajs/openapi";
// The package exports map hides its browser bundle, so it is imported by path (embedded by `bun build --compile`).
import scalarBundle from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };
import { Elysia } from "elysia";
import type { Logger } from "pino";
import { type Engine, type Page, executeQuery } from "../engine/execute.ts";
import { DeferredQueue, isExpensive } from "../engine/scheduler.ts";
import { ProblemError } from "../query/errors.ts";
import { parseGetQuery } from "../query/get.ts";
import { parsePostBody } from "../query/post.ts";
import type { Query } from "../query/types.ts";
import { getUsersDoc, healthDoc, postUsersDoc } from "./openapi-doc.ts";
import { JSON_HEADERS, getResponse, postResponse, problemResponse } from "./responses.ts";

/** Largest POST body, in bytes (INTERFACE.md "POST /api/users": at most 64 KiB). */
export const MAX_BODY_BYTES = 64 * 1024;

/** Default largest page size / row window, in rows (INTERFACE.md: default max 1000). */
export const DEFAULT_MAX_PAGE_SIZE = 1000;

/** Paths the app serves and their methods, for 405 with `Allow` (INTERFACE.md "Errors"). */
const ROUTES: Record<string, string> = {
  "/api/users": "GET, POST",
  "/healthz": "GET",
  "/openapi": "GET",
  "/openapi/json": "GET",
};

/** Options of {@link createApp}. */
export interface AppOptions {
  /** The engine serving now; called per request so a reload can swap it. */
  engine: () => Engine;
  /** Largest page size / row window, in rows. */
  maxPageSize: number;
  logger: Logger;
  /** Extra routes (the demo page) mounted on the app. */
  plugins?: Elysia<any>[];
}

/** True for a content type that is JSON (`application/json`, `application/*+json`, any parameters). */
function isJsonType(contentType: string): boolean {
  const media = contentType.split(";")[0].trim().toLowerCase();
  return media === "application/json" || (media.startsWith("application/") && media.endsWith("+json"));
}

/** A 500 with a request id, logged with the error (never a stack trace to the client). */
function internalError(logger: Logger, error: unknown): Response {
  const requestId = crypto.randomUUID();
  logger.error({ err: error, requestId }, "unexpected error");
  return problemResponse("INTERNAL", `unexpected error; quote request id ${requestId}`, [], {}, { requestId });
}

function fromError(logger: Logger, error: unknown): Response {
  if (error instanceof ProblemError) return problemResponse(error.code, error.detail, error.errors);
  return internalError(logger, error);
}

/** The /api/users handlers: a Request in, a Response out, every failure a problem+json response. */
export interface UsersHandlers {
  /**
   * GET /api/users (INTERFACE.md "GET /api/users"): a Response at once, or a promise of one
   * when the query is queued as expensive (engine/scheduler.ts).
   */
  get: (request: Request) => Response | Promise<Response>;
  /** POST /api/users (INTERFACE.md "POST /api/users"); reads the body, hence async. */
  post: (request: Request) => Promise<Response>;
}

/** Decodes POST bodies (UTF-8, a BOM dropped, bad bytes as U+FFFD; stateless between calls). */
const bodyDecoder = new TextDecoder();

/**
 * The handlers of /api/users, free of the framework so that Bun's router calls them directly
 * (see {@link createApp}); the Elysia routes call the same functions.
 */
export function usersHandlers(options: Pick<AppOptions, "engine" | "maxPageSize" | "logger">): UsersHandlers {
  const { maxPageSize, logger } = options;
  // Expensive queries (an uncached substring filter, say) wait their turn here, so that cheap
  // ones, answered at once, are not held up behind them (engine/scheduler.ts).
  const queue = new DeferredQueue();
  const answer = (engine: Engine, query: Query, respond: (page: Page) => Response): Response | Promise<Response> => {
    if (!isExpensive(engine, query)) return respond(executeQuery(engine, query));
    return queue.run(() => respond(executeQuery(engine, query))).catch((error: unknown) => fromError(logger, error));
  };
  const get = (request: Request): Response | Promise<Response> => {
    try {
      const url = request.url;
      const q = url.indexOf("?");
      const parsed = parseGetQuery(q < 0 ? "" : url.slice(q + 1), maxPageSize);
      const engine = options.engine();
      return answer(engine, parsed.query, (page) => getResponse(engine.store, page.rows, page.total, parsed));
    } catch (error) {
      return fromError(logger, error);
    }
  };
  const post = async (request: Request): Promise<Response> => {
    try {
      const contentType = request.headers.get("content-type");
      if (contentType !== null && contentType.trim() !== "" && !isJsonType(contentType)) {
        return problemResponse("UNSUPPORTED_MEDIA_TYPE", `the body must be JSON (application/json), not ${contentType}`);
      }
      const length = request.headers.get("content-length");
      if (length !== null && Number(length) > MAX_BODY_BYTES) {
        return problemResponse("PAYLOAD_TOO_LARGE", `the body is ${length} bytes; at most ${MAX_BODY_BYTES} are accepted`);
      }
      const bytes = new Uint8Array(await request.arrayBuffer());
      if (bytes.length > MAX_BODY_BYTES) {
        return problemResponse("PAYLOAD_TOO_LARGE", `the body is ${bytes.length} bytes; at most ${MAX_BODY_BYTES} are accepted`);
      }
      let body: unknown = {};
      const text = bodyDecoder.decode(bytes);
      if (text.trim() !== "") {
        try {
          body = JSON.parse(text);
        } catch (error) {
          return problemResponse("MALFORMED_JSON", `the body is not valid JSON: ${(error as Error).message}`, [{ pointer: "", detail: "not valid JSON" }]);
        }
      }
      const parsed = parsePostBody(body, maxPageSize);
      const engine = options.engine();
      return await answer(engine, parsed.query, (page) => postResponse(engine.store, page.rows, page.total));
    } catch (error) {
      return fromError(logger, error);
    }
  };
  return { get, post };
}

/**
 * Builds the app.
 * Routes: GET/POST /api/users, GET /healthz, GET /openapi (UI, assets served locally),
 * GET /openapi/json; everything else is a problem+json 404 or 405.
 *
 * Served by `listen`, GET and POST /api/users go from Bun's router straight to
 * {@link usersHandlers} (Elysia's `serve.routes`, which override its own handlers of those
 * routes): Elysia's per-request context, async wrapper and response mapping cost about as much
 * as a cheap query. The Elysia routes stay, with the same handlers, for the OpenAPI document and
 * for `app.handle`/`app.fetch`; other methods on the path fall through to Elysia's 405.
 */
export function createApp(options: AppOptions) {
  const { maxPageSize, logger } = options;
  const users = usersHandlers(options);
  const app = new Elysia({ serve: { routes: { "/api/users": { GET: users.get, POST: users.post } } } })
    .use(
      openapi({
        path: "/openapi",
        specPath: "/openapi/json",
        documentation: {
          info: {
            title: "Users listing service",
            version: "1.0.0",
            description: "Server-side paging, sorting and filtering of user records for TanStack Table (GET) and AG Grid (POST).",
          },
        },
        scalar: { cdn: "/openapi/assets/scalar.js", withDefaultFonts: false, hideClientButton: true } as never,
      }),
    )
    .get("/openapi/assets/scalar.js", () => new Response(Bun.file(scalarBundle), { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" } }), {
      detail: { hide: true },
    })
    .get(
      "/healthz",
      () => {
        const engine = options.engine();
        return new Response(JSON.stringify({ status: "ok", rows: engine.store.rowCount, snapshotId: engine.store.snapshotId }), { headers: JSON_HEADERS });
      },
      { detail: healthDoc as never },
    )
    .get("/api/users", ({ request }) => users.get(request), { detail: getUsersDoc(maxPageSize) as never })
    .post("/api/users", ({ request }) => users.post(request), { parse: "none", detail: postUsersDoc(maxPageSize) as never });
  for (const plugin of options.plugins ?? []) app.use(plugin);
  app.onError(({ code, error, request }) => {
    if (code === "NOT_FOUND") {
      const path = new URL(request.url).pathname;
      const allow = ROUTES[path] ?? (path === "/" && (options.plugins?.length ?? 0) > 0 ? "GET" : undefined);
      if (allow !== undefined && !allow.split(", ").includes(request.method)) {
        return problemResponse("METHOD_NOT_ALLOWED", `${request.method} is not allowed on ${path}; allowed: ${allow}`, [], { Allow: allow });
      }
      return problemResponse("NOT_FOUND", `no resource at ${path}`);
    }
    if (code === "PARSE") return problemResponse("MALFORMED_JSON", "the body could not be parsed", []);
    return internalError(logger, error);
  });
  return app;
}
