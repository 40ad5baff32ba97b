/**
 * The demo page as an Elysia plugin: `GET /` serves index.html, an AG Grid and a TanStack Table
 * client of /api/users, built from the npm packages (no CDN). scripts/build-assets.ts bundles
 * the page, its script and its styles ahead of time (Bun.build, minified, content-hashed names
 * under `/assets/`, precompressed); src/http/static-assets.ts serves them, with the pages'
 * security headers, and embeds them in `bun build --compile` binaries.
 */
import type { Elysia } from "elysia";
import { staticAssetsPlugin } from "../http/static-assets.ts";

/** Path the demo page is served at. */
export const DEMO_PATH = "/";

/**
 * The plugin to pass in `createApp({plugins})` / `startServer({plugins})`.
 * @returns an Elysia instance with `GET /` → the demo page (text/html) and `GET /assets/…` →
 *   its bundle, HEAD of each, all hidden from the OpenAPI document
 * @throws Error when the assets cannot be built or loaded (src/http/static-assets.ts)
 */
export function demoPlugin(): Elysia<any> {
  return staticAssetsPlugin("demo");
}
