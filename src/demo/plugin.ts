/**
 * The demo page as a plugin of the server (src/http/routes.ts): `GET /` serves index.html, an
 * AG Grid and a TanStack Table client of the API, built from the npm packages (no CDN).
 * scripts/build-assets.ts bundles the page, its script and its styles ahead of time (Bun.build,
 * minified, content-hashed names under `/assets/`, precompressed); src/http/static-assets.ts
 * serves them, with the pages' security headers, and embeds them in `bun build --compile`
 * binaries.
 *
 * The page finds the API at its root element's `data-api-base` attribute (`/api/users` as
 * built); a server with another resource name (`--resource`) serves the page with the
 * attribute naming its own base — an attribute, not a script, so the page's CSP is unchanged.
 */
import type { Plugin, Route } from "../http/routes.ts";
import { staticAssets, staticAssetsPlugin } from "../http/static-assets.ts";

/** Path the demo page is served at. */
export const DEMO_PATH = "/";

/** The API base the built page names. */
const BUILT_BASE = "/api/users";

/**
 * The plugin to pass in `startServer({plugins})`.
 * @param apiBase the API's base path (`/api/<resource>`); default `/api/users`
 * @returns the routes `GET /` → the demo page (text/html) and `GET /assets/…` → its bundle,
 *   HEAD of each, all left out of the OpenAPI document
 * @throws Error when the assets cannot be built or loaded (src/http/static-assets.ts)
 */
export function demoPlugin(apiBase: string = BUILT_BASE): Plugin {
  const plugin = staticAssetsPlugin("demo");
  if (apiBase === BUILT_BASE) return plugin;
  let page: { body: string; etag: string; headers: Headers } | null = null;
  const rewritten = async (): Promise<NonNullable<typeof page>> => {
    if (page !== null) return page;
    const built = staticAssets().serve(new Request(`http://localhost${DEMO_PATH}`), DEMO_PATH);
    if (built === null) throw new Error("the demo page is not among the built assets");
    const html = await built.text();
    const attribute = `data-api-base="${BUILT_BASE}"`;
    if (!html.includes(attribute)) throw new Error(`the built demo page lacks ${attribute}`);
    const body = html.replace(attribute, `data-api-base="${apiBase}"`);
    const headers = new Headers(built.headers);
    headers.delete("content-encoding");
    headers.delete("vary");
    headers.delete("content-length");
    const etag = `"${Bun.hash(body).toString(36)}"`;
    headers.set("etag", etag);
    page = { body, etag, headers };
    return page;
  };
  const routes: Route[] = plugin.routes.map((route) =>
    route.path !== DEMO_PATH
      ? route
      : {
          ...route,
          handler: async (request: Request) => {
            const { body, etag, headers } = await rewritten();
            const match = request.headers.get("if-none-match");
            if (match !== null && match.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)) return new Response(null, { status: 304, headers: { etag, "cache-control": headers.get("cache-control") ?? "no-cache" } });
            return new Response(request.method === "HEAD" ? null : body, { headers });
          },
        },
  );
  return { routes };
}
