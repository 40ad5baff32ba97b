/**
 * The route table: every path the server answers, once, with what serves it and what documents
 * it. The Elysia app (app.ts `createApp`) and the envelope (envelope.ts: API keys, 404/405 and `Allow`, preflights,
 * metrics labels) are made from it, and so is the OpenAPI document (each route's TypeBox
 * declarations, declarations.ts, read by @elysiajs/openapi): a route cannot be served without
 * being listed, nor documented without being served.
 */
import type { Schema } from "../schema/kinds.ts";
import type { Declaration } from "./declarations.ts";
import type { Handler } from "./envelope.ts";
import type { ResourcePaths } from "./resource.ts";

/** The methods a route may serve (`GET` also answers `HEAD`: Bun's native router, which Elysia's `listen` hands the routes to, calls it for both). */
export type RouteMethod = "GET" | "POST";

/** What an operation's description depends on: the served snapshot's schema and the server's settings. */
export interface DocContext {
  /** The served snapshot's schema (docs/api.md "Any users table: the schema": the document describes its columns). */
  schema: Schema;
  /** Largest page size / row window, in rows. */
  maxPageSize: number;
  /** The data routes' paths (docs/api.md "Resource name"). */
  paths: ResourcePaths;
  /** True with access control on (docs/api.md "Access control"): keyed operations may also answer 403. */
  access?: boolean;
}

/** One route: a method on a path. */
export interface Route {
  method: RouteMethod;
  /** The path, matched exactly (no trailing slash, no parameters); also the `route` label of the metrics. */
  path: string;
  /** Answers the request; every failure is its own problem+json answer. */
  handler: Handler;
  /**
   * The route's TypeBox declarations (query, headers, body, answers by status: declarations.ts)
   * for a context, without the key's security, which the document derives from {@link keyed};
   * null for a route the document leaves out (the pages and their files).
   */
  operation: ((context: DocContext) => Declaration) | null;
  /**
   * True when the route needs `Authorization: Bearer <key>` while API keys are on
   * (docs/api.md "API keys"), or a credential while access control is on (docs/api.md "Access
   * control"): every route that reads the data, and the metrics.
   */
  keyed: boolean;
  /**
   * True when, with access control on, only a role that sees every row and every column may
   * call it (the metrics: they count every row and every request); absent: false.
   */
  wholeTable?: boolean;
}

/** Routes served beside the API: the demo page and its files, say (`serve --no-demo` leaves them out). */
export interface Plugin {
  routes: readonly Route[];
}

/** One path of the table: its routes' handlers by method, whether it needs a key, and whether a role must see the whole table. */
export interface PathRoutes {
  path: string;
  methods: Record<string, Handler>;
  keyed: boolean;
  wholeTable: boolean;
}

/**
 * The table grouped by path, in table order.
 * @throws Error when two routes share a path and a method, or a path's routes disagree on `keyed` or `wholeTable`
 */
export function routesByPath(routes: readonly Route[]): PathRoutes[] {
  const byPath = new Map<string, PathRoutes>();
  for (const route of routes) {
    let entry = byPath.get(route.path);
    if (entry === undefined) {
      entry = { path: route.path, methods: {}, keyed: route.keyed, wholeTable: route.wholeTable === true };
      byPath.set(route.path, entry);
    }
    if (route.method in entry.methods) throw new Error(`internal: ${route.method} ${route.path} is in the route table twice`);
    if (entry.keyed !== route.keyed) throw new Error(`internal: the routes of ${route.path} disagree on whether they need an API key`);
    if (entry.wholeTable !== (route.wholeTable === true)) throw new Error(`internal: the routes of ${route.path} disagree on whether they need the whole table`);
    entry.methods[route.method] = route.handler;
  }
  return [...byPath.values()];
}
