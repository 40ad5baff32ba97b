/**
 * Cross-origin resource sharing (docs/api.md "HTTP envelope", CORS; the Fetch standard's CORS
 * protocol): off unless origins are configured; then the allowed origins read responses and the
 * entity tag and snapshot id headers, and preflights are answered without an API key.
 */

/** Which origins may read responses. */
export interface CorsPolicy {
  /** `*` was configured: every origin is allowed (each answer names the request's origin). */
  anyOrigin: boolean;
  /** The allowed origins, serialized as `scheme://host[:port]` (the `Origin` header's form). */
  origins: ReadonlySet<string>;
}

/** Headers a preflight allows (docs/api.md: `content-type, authorization`). */
export const CORS_ALLOW_HEADERS = "content-type, authorization";

/** Response headers a cross-origin script may read besides the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS = "ETag, X-Snapshot-Id";

/** How long a browser may cache a preflight answer, in seconds. */
export const CORS_MAX_AGE_S = 600;

/**
 * Parses `--cors-origin` / `CORS_ORIGIN`: `*`, or a comma list of origins such as
 * `https://app.example.com,http://localhost:5173`.
 * @returns the policy, or null (CORS off) for an absent or blank value
 * @throws Error naming the entry when an entry is not an origin (a path, a missing scheme)
 */
export function parseCorsOrigins(value: string | undefined): CorsPolicy | null {
  if (value === undefined || value.trim() === "") return null;
  const entries = value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  if (entries.includes("*")) return { anyOrigin: true, origins: new Set() };
  const origins = new Set<string>();
  for (const entry of entries) {
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch {
      // not a URL at all
    }
    // Only scheme://host[:port] (a trailing slash tolerated): the form browsers send in `Origin`.
    if (url === null || url.origin === "null" || url.pathname !== "/" || url.search !== "" || url.hash !== "" || url.username !== "" || /^[^:]+:\/\/[^/]+\/./.test(entry)) {
      throw new Error(`CORS origin must be scheme://host[:port] or * (got "${entry}")`);
    }
    // URL lower-cases the scheme and host and drops a default port, as browsers do in `Origin`.
    origins.add(url.origin);
  }
  return { anyOrigin: false, origins };
}

/** The request's `Origin` when the policy allows it; null for no origin or a refused one. */
export function allowedOrigin(policy: CorsPolicy, origin: string | null): string | null {
  if (origin === null) return null;
  if (policy.anyOrigin) return origin;
  return policy.origins.has(origin) ? origin : null;
}

/**
 * Adds the CORS headers of an actual (non-preflight) response: `Vary: Origin` always (the answer
 * depends on the origin), and for an allowed origin `Access-Control-Allow-Origin` (that origin)
 * and `Access-Control-Expose-Headers`.
 * @param response a response whose headers may be changed (one this server built)
 */
export function addCorsHeaders(policy: CorsPolicy, origin: string | null, response: Response): void {
  const headers = response.headers;
  headers.append("vary", "Origin");
  const allowed = allowedOrigin(policy, origin);
  if (allowed === null) return;
  headers.set("access-control-allow-origin", allowed);
  headers.set("access-control-expose-headers", CORS_EXPOSE_HEADERS);
}

/** True for a CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(request: Request): boolean {
  return request.method === "OPTIONS" && request.headers.has("origin") && request.headers.has("access-control-request-method");
}

/**
 * The headers of a preflight answer (204) from an allowed origin.
 * @param origin the allowed origin (from {@link allowedOrigin})
 * @param methods the path's methods, e.g. `GET, HEAD, POST`
 */
export function preflightHeaders(origin: string, methods: string): Record<string, string> {
  return {
    "access-control-allow-origin": origin,
    "access-control-allow-methods": methods,
    "access-control-allow-headers": CORS_ALLOW_HEADERS,
    "access-control-max-age": String(CORS_MAX_AGE_S),
    vary: "Origin",
  };
}
