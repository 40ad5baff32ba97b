/**
 * The demo page as an Elysia plugin: `GET /` serves index.html, an AG Grid and a TanStack Table
 * client of /api/users, built from the npm packages by Bun's HTML imports (no CDN). Bun bundles
 * the page's script and styles on first request when run from source, and ahead of time into
 * `bun build --compile` binaries; the bundle's assets are served by Bun under `/_bun/…`.
 *
 * Bun serves an HTML import as a static route, outside Elysia's handlers, so it carries no
 * Elysia hooks; a global `onRequest` hook on the app would turn it into a plain JSON handler.
 */
import { Elysia } from "elysia";
import demoPage from "./index.html";

/** Path the demo page is served at. */
export const DEMO_PATH = "/";

/**
 * The plugin to pass in `createApp({plugins})` / `startServer({plugins})`.
 * @returns an Elysia instance with one route, `GET /` → the demo page (text/html).
 */
export function demoPlugin(): Elysia<any> {
  return new Elysia({ name: "demo-page" }).get(DEMO_PATH, demoPage as never, { detail: { hide: true } }) as unknown as Elysia<any>;
}
