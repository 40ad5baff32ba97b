/**
 * The demo page as a plugin of the server (src/http/routes.ts): `GET /` serves index.html, an
 * AG Grid and a TanStack Table client of /api/users, built from the npm packages (no CDN). scripts/build-assets.ts bundles
 * the page, its script and its styles ahead of time (Bun.build, minified, content-hashed names
 * under `/assets/`, precompressed); src/http/static-assets.ts serves them, with the pages'
 * security headers, and embeds them in `bun build --compile` binaries.
 */
import type { Plugin } from "../http/routes.ts";
import { staticAssetsPlugin } from "../http/static-assets.ts";

/** Path the demo page is served at. */
export const DEMO_PATH = "/";

/**
 * The plugin to pass in `startServer({plugins})`.
 * @returns the routes `GET /` → the demo page (text/html) and `GET /assets/…` → its bundle,
 *   HEAD of each, all left out of the OpenAPI document
 * @throws Error when the assets cannot be built or loaded (src/http/static-assets.ts)
 */
export function demoPlugin(): Plugin {
  return staticAssetsPlugin("demo");
}
