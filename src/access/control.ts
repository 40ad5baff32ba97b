/**
 * Access control (docs/api.md "Access control"): who a request's credential is, and what it
 * may see. `Authorization: Bearer <JWT or key>` is checked against the policy (policy.ts): a key
 * by its SHA-256, compared in constant time with every key of the policy; a JWT verified by jose
 * (signature, `exp` — required —, `nbf`, and `iss`/`aud` when the policy names them) and its
 * `exp`, `nbf` and `iat` finite and within 100 years of now, its role read from the policy's role
 * claim. The outcome is a grant (the role's view: view.ts) or a
 * denial by reason: 401 for a missing, invalid or expired credential, 403 for an unknown role, a
 * claim the role's filter needs and the credential lacks (or holds with a value that does not
 * fit), or a role that may not read the metrics.
 *
 * Verified tokens are kept (by their exact text, in a byte-bounded cache, until their `exp`):
 * verifying an HS256 token costs jose about 30 µs, a cached one a map lookup. Denials are
 * counted by reason in the metrics and logged at most once a second per reason; a token, a key
 * or a secret never appears in a log line, a metric or an answer. SIGHUP re-reads the policy
 * ({@link AccessControl.reload}); a policy that does not pass its checks keeps the old one.
 */
import { timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import { type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import { ByteLru } from "../bits/byte-lru.ts";
import type { Schema } from "../schema/kinds.ts";
import { type AccessPolicy, type KeyEntry, PolicyError, type RoleSpec, keyDigest, readPolicy } from "./policy.ts";
import { type RoleView, ViewCache, type ViewRefusal } from "./view.ts";

/** Why a request is refused (the `reason` label of the denials metric). */
export const DENIAL_REASONS = ["missing", "invalid", "expired", "unknown_role", "missing_claim", "invalid_claim", "not_allowed", "policy_mismatch"] as const;

/** A reason a request is refused. */
export type DenialReason = (typeof DENIAL_REASONS)[number];

/** The HTTP status of each reason (docs/api.md "Access control"): 401 for the credential, 403 for what it may see. */
export const DENIAL_STATUS: Record<DenialReason, 401 | 403 | 500> = {
  missing: 401,
  invalid: 401,
  expired: 401,
  unknown_role: 403,
  missing_claim: 403,
  invalid_claim: 403,
  not_allowed: 403,
  policy_mismatch: 500,
};

/** A refused request: the reason and a sentence for the client (never the credential or a secret). */
export interface Denial {
  denied: DenialReason;
  detail: string;
}

/** Who a credential is: its role and its claims (a JWT's payload, or a key's `claims`). */
export interface Principal {
  role: RoleSpec;
  claims: Readonly<Record<string, unknown>>;
}

/** An admitted request: who, and the view of the table it gets. */
export interface Grant {
  principal: Principal;
  view: RoleView;
}

/** Longest credential read, in characters: a token longer than any identity provider issues is refused unread. */
export const MAX_CREDENTIAL_CHARS = 8192;

/** Budget of the verified-token cache, in bytes (tokens are kept by their text). */
export const TOKEN_CACHE_BYTES = 8 * 1024 * 1024;

/** Least time between two log lines of one denial reason, in ms. */
const LOG_INTERVAL_MS = 1000;

/** `Bearer <token>`: the scheme is case-insensitive (RFC 9110 §11.1), one space or more before the token. */
const BEARER = /^bearer +(\S+) *$/i;

/** A JWS compact serialization: three base64url parts. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** A verified token kept: its expiry, and who it is (or the denial its claims earn, e.g. an unknown role). */
interface TokenEntry {
  /** `exp` in ms since the epoch (plus the clock tolerance). */
  expiresAt: number;
  outcome: Principal | Denial;
  /** The grant for {@link TokenEntry.schema}, made on first use. */
  grant: Grant | Denial | null;
  schema: Schema | null;
}

/** What one policy serves with: the policy, its views, its verified tokens, its keys' grants. */
interface State {
  policy: AccessPolicy;
  views: ViewCache;
  tokens: ByteLru<TokenEntry>;
  /** Per key of the policy (same order): its principal, and its grant for the last schema. */
  keys: { principal: Principal; schema: Schema | null; grant: Grant | Denial | null }[];
}

/** What a request asks for: the data (any role), or everything (the metrics: a role that sees every row and column). */
export type Need = "data" | "everything";

/** Options of {@link createAccessControl}. */
export interface AccessOptions {
  /** The policy file (`--access FILE`). */
  file: string;
  /** The schema served now (the policy is checked against it, and again at each reload). */
  schema: () => Schema;
  logger: Logger;
  /** Where the access metrics are registered (the server's registry), or null for none. */
  registry: Registry | null;
  /** Budget of the view cache, in bytes (default view.ts `VIEW_CACHE_BYTES`). */
  viewCacheBytes?: number;
}

/** Access control over one policy file. */
export interface AccessControl {
  /**
   * The grant or denial of a request's credential for the data served with `schema`: at once
   * for a key or a token verified before, later for a token verified now. A denial is counted
   * and logged (rate-limited).
   * @param need "everything" for the metrics (a role that sees every row and column)
   */
  authorize(request: Request, schema: Schema, need?: Need): Grant | Denial | Promise<Grant | Denial>;
  /** The grant of the same principal for another schema (a snapshot swapped in since the request was authorized). */
  regrant(grant: Grant, schema: Schema): Grant | Denial;
  /**
   * Re-reads the policy file and swaps it in (SIGHUP): the verified tokens and the views of the
   * old one are dropped. A policy that does not pass its checks is refused and the old one
   * keeps serving.
   * @throws PolicyError (or a file error) when the new policy is refused
   */
  reload(): void;
  /** The policy serving now. */
  policy(): AccessPolicy;
}

/** True for a denial (as opposed to a grant). */
export function isDenial(outcome: Grant | Denial): outcome is Denial {
  return (outcome as Denial).denied !== undefined;
}

/**
 * Reads the policy file, checks it against the schema served now, and makes its access control.
 * @throws PolicyError listing every problem of the file as `file:line: reason`
 */
export function createAccessControl(options: AccessOptions): AccessControl {
  const { logger } = options;
  const load = (): State => {
    const policy = readPolicy(options.file, options.schema());
    return {
      policy,
      views: new ViewCache(policy.id, options.viewCacheBytes),
      tokens: new ByteLru<TokenEntry>(TOKEN_CACHE_BYTES),
      keys: policy.keys.map((key: KeyEntry) => ({ principal: { role: policy.roles.get(key.role) as RoleSpec, claims: key.claims }, schema: null, grant: null })),
    };
  };
  let state = load();

  const metrics = options.registry === null ? null : accessMetrics(options.registry, () => state);
  // the last time each reason was logged, and the denials not logged since
  const lastLogged = new Map<DenialReason, number>();
  const suppressed = new Map<DenialReason, number>();

  const refuse = (denial: Denial, request: Request): Denial => {
    metrics?.denials.inc({ reason: denial.denied });
    const now = Date.now();
    const last = lastLogged.get(denial.denied) ?? Number.NEGATIVE_INFINITY;
    if (now - last < LOG_INTERVAL_MS) {
      suppressed.set(denial.denied, (suppressed.get(denial.denied) ?? 0) + 1);
      return denial;
    }
    lastLogged.set(denial.denied, now);
    const skipped = suppressed.get(denial.denied) ?? 0;
    suppressed.set(denial.denied, 0);
    const fields = { reason: denial.denied, status: DENIAL_STATUS[denial.denied], detail: denial.detail, method: request.method, path: pathOf(request.url), ...(skipped > 0 ? { alsoDeniedSinceLastLine: skipped } : {}) };
    if (denial.denied === "policy_mismatch") logger.error(fields, "access denied: the access policy does not fit the served snapshot");
    else if (DENIAL_STATUS[denial.denied] === 401) logger.info(fields, "access denied");
    else logger.warn(fields, "access denied");
    return denial;
  };

  /** The grant of a principal over `schema`, through the view cache. */
  const grantOf = (s: State, principal: Principal, schema: Schema): Grant | Denial => {
    const view = s.views.viewOf(principal.role, principal.claims, schema);
    if ("reason" in view) return { denied: (view as ViewRefusal).reason, detail: (view as ViewRefusal).detail };
    return { principal, view: view as RoleView };
  };

  /** The grant or denial, checked for what the request needs. */
  const admitted = (outcome: Grant | Denial, need: Need, request: Request): Grant | Denial => {
    if (isDenial(outcome)) return refuse(outcome, request);
    if (need === "everything" && !outcome.view.unrestricted) {
      return refuse({ denied: "not_allowed", detail: `role "${outcome.principal.role.name}" may not read this: it needs a role that sees every row and column` }, request);
    }
    return outcome;
  };

  /** A verified JWT's entry: its role (or why it has none) and its expiry. */
  const entryOf = (s: State, payload: JWTPayload): TokenEntry => {
    const claims = payload as Record<string, unknown>;
    const named = claims[s.policy.roleClaim];
    const expiresAt = typeof payload.exp === "number" ? payload.exp * 1000 + (s.policy.jwt?.clockToleranceSeconds ?? 0) * 1000 : Number.POSITIVE_INFINITY;
    let outcome: Principal | Denial;
    if (typeof named !== "string") outcome = { denied: "unknown_role", detail: `the token names no role: its claim ${JSON.stringify(s.policy.roleClaim)} is ${named === undefined ? "absent" : "not a string"}` };
    else {
      const role = s.policy.roles.get(named);
      outcome = role === undefined ? { denied: "unknown_role", detail: `the token's role ${JSON.stringify(named.length > 64 ? `${named.slice(0, 64)}…` : named)} is not one of the access policy's` } : { role, claims };
    }
    return { expiresAt, outcome, grant: null, schema: null };
  };

  /** The grant of a kept token's entry over `schema` (made once per schema). */
  const entryGrant = (s: State, entry: TokenEntry, schema: Schema): Grant | Denial => {
    if (isDenial(entry.outcome as Grant | Denial)) return entry.outcome as Denial;
    if (entry.schema !== schema || entry.grant === null) {
      entry.grant = grantOf(s, entry.outcome as Principal, schema);
      entry.schema = schema;
    }
    return entry.grant;
  };

  const authorize = (request: Request, schema: Schema, need: Need = "data"): Grant | Denial | Promise<Grant | Denial> => {
    const s = state;
    const header = request.headers.get("authorization");
    const match = header === null ? null : BEARER.exec(header);
    if (match === null) return refuse({ denied: "missing", detail: "this endpoint needs a credential: send Authorization: Bearer <token or key>" }, request);
    const token = match[1];
    if (token.length > MAX_CREDENTIAL_CHARS) return refuse({ denied: "invalid", detail: `the credential is longer than ${MAX_CREDENTIAL_CHARS} characters` }, request);
    // a token verified before: until its expiry
    const kept = s.tokens.get(token);
    if (kept !== undefined) {
      if (Date.now() >= kept.expiresAt) {
        s.tokens.delete(token);
        return refuse({ denied: "expired", detail: "the token has expired" }, request);
      }
      return admitted(entryGrant(s, kept, schema), need, request);
    }
    // a key of the policy: its digest against every key's, without stopping at a match
    if (s.keys.length > 0) {
      const presented = keyDigest(token);
      let found = -1;
      for (let k = 0; k < s.keys.length; k++) {
        if (timingSafeEqual(presented, s.policy.keys[k].digest) && found < 0) found = k;
      }
      if (found >= 0) {
        const key = s.keys[found];
        if (key.schema !== schema || key.grant === null) {
          key.grant = grantOf(s, key.principal, schema);
          key.schema = schema;
        }
        return admitted(key.grant, need, request);
      }
    }
    const jwt = s.policy.jwt;
    if (jwt === null || !JWT_SHAPE.test(token)) return refuse({ denied: "invalid", detail: "the credential is not valid: not a key of the access policy, nor a JWT" }, request);
    return verify(s, token).then(
      (payload) => {
        const times = timeClaimProblem(payload, Date.now());
        if (times !== null) return refuse({ denied: "invalid", detail: `the token is not valid: ${times}` }, request);
        const entry = entryOf(s, payload);
        // kept by its text; its bytes: the text (2 bytes a character) and the claims, roughly
        s.tokens.set(token, entry, 512 + 4 * token.length);
        return admitted(entryGrant(s, entry, schema), need, request);
      },
      (error: unknown) => refuse(jwtDenial(error), request),
    );
  };

  const regrant = (grant: Grant, schema: Schema): Grant | Denial => {
    const s = state;
    const role = s.policy.roles.get(grant.principal.role.name);
    if (role === undefined) return { denied: "unknown_role", detail: `role "${grant.principal.role.name}" is no longer one of the access policy's` };
    return grantOf(s, { role, claims: grant.principal.claims }, schema);
  };

  const reload = () => {
    let next: State;
    try {
      next = load();
    } catch (error) {
      metrics?.reloads.inc({ result: "refused" });
      throw error;
    }
    state = next;
    metrics?.reloads.inc({ result: "ok" });
    logger.info({ file: options.file, roles: next.policy.roles.size, keys: next.policy.keys.length, jwt: next.policy.jwt?.keys.kind ?? "none" }, "access policy reloaded");
  };

  return { authorize, regrant, reload, policy: () => state.policy };
}

/**
 * True when the request's credential is of a role that sees every row and column: what the
 * health bodies' counts, ids and LSNs need (docs/api.md "Access control"); false without a
 * credential (not counted as a denial: probes send none), for one refused (counted and logged as
 * any denial) or of a restricted role. A promise when a token is verified now.
 */
export function seesEverything(access: AccessControl, request: Request, schema: Schema): boolean | Promise<boolean> {
  if (request.headers.get("authorization") === null) return false;
  const outcome = access.authorize(request, schema, "data");
  const sees = (o: Grant | Denial): boolean => !isDenial(o) && o.view.unrestricted;
  return outcome instanceof Promise ? outcome.then(sees) : sees(outcome);
}

/** Furthest a token's `exp`, `nbf` or `iat` may be from now, in seconds: 100 years (docs/api.md "Access control", credentials). */
export const MAX_TIME_CLAIM_SECONDS = 100 * 365.25 * 86_400;

/**
 * Why a verified token's time claims are refused, or null: `exp`, `nbf` and `iat`, when present,
 * must each be a finite number of seconds within {@link MAX_TIME_CLAIM_SECONDS} of now (a JSON
 * `1e999` reads as Infinity, which would never expire; jose checks their type and order only).
 * @param nowMs the time now, in ms since the epoch
 */
export function timeClaimProblem(payload: JWTPayload, nowMs: number): string | null {
  for (const name of ["exp", "nbf", "iat"] as const) {
    const value: unknown = payload[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value)) return `its ${name} is not a finite number of seconds`;
    if (Math.abs(value - nowMs / 1000) > MAX_TIME_CLAIM_SECONDS) return `its ${name} is more than 100 years from now`;
  }
  return null;
}

/** Verifies a JWT with the policy's keys (each secret in turn while one replaces another). */
async function verify(s: State, token: string): Promise<JWTPayload> {
  const jwt = s.policy.jwt as NonNullable<AccessPolicy["jwt"]>;
  const options = { algorithms: jwt.algorithms, issuer: jwt.issuer, audience: jwt.audience, clockTolerance: jwt.clockToleranceSeconds, requiredClaims: ["exp"] };
  if (jwt.keys.kind === "jwks") return (await jwtVerify(token, jwt.keys.keySet, options)).payload;
  const secrets = jwt.keys.secrets;
  for (let i = 0; ; i++) {
    try {
      return (await jwtVerify(token, secrets[i], options)).payload;
    } catch (error) {
      // another secret may have signed it; any other failure is the token's
      if (!(error instanceof joseErrors.JWSSignatureVerificationFailed) || i === secrets.length - 1) throw error;
    }
  }
}

/** The denial of a token jose refused, in words of our own (jose's messages never hold the token, but ours are the contract). */
function jwtDenial(error: unknown): Denial {
  if (error instanceof joseErrors.JWTExpired) return { denied: "expired", detail: "the token has expired" };
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    const claim = error.claim;
    const what =
      claim === "exp" ? "it has no expiry (exp)" : claim === "nbf" ? "it is not valid yet (nbf)" : claim === "iss" ? "its issuer (iss) is not the expected one" : claim === "aud" ? "its audience (aud) is not this service" : `its claim ${JSON.stringify(claim)} is not valid`;
    return { denied: "invalid", detail: `the token is not valid: ${what}` };
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return { denied: "invalid", detail: "the token is not valid: its algorithm (alg) is not one the access policy accepts" };
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return { denied: "invalid", detail: "the token is not valid: its signature does not verify" };
  if (error instanceof joseErrors.JWKSNoMatchingKey) return { denied: "invalid", detail: "the token is not valid: no key of the JWKS file matches its kid and alg" };
  return { denied: "invalid", detail: "the token is not valid: it is not a well-formed JWT" };
}

/** The path of a request URL, without its query. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  return query < 0 ? url.slice(start) : url.slice(start, query);
}

/** The access metrics: denials by reason, policy reloads by result, and the caches' sizes. */
function accessMetrics(registry: Registry, state: () => State) {
  const registers = [registry];
  const denials = new Counter({
    name: "users_listing_access_denials_total",
    help: "Requests refused by access control, by reason: missing, invalid or expired credential (401); unknown role, missing or invalid claim, a role that may not read it (403); a policy that does not fit the snapshot (500).",
    labelNames: ["reason"] as const,
    registers,
  });
  for (const reason of DENIAL_REASONS) denials.inc({ reason }, 0);
  const reloads = new Counter({
    name: "users_listing_access_policy_reloads_total",
    help: 'Access policy re-reads (SIGHUP) by result: "ok", or "refused" (the previous policy kept serving).',
    labelNames: ["result"] as const,
    registers,
  });
  reloads.inc({ result: "ok" }, 0);
  reloads.inc({ result: "refused" }, 0);
  new Gauge({
    name: "users_listing_access_cache_entries",
    help: "Entries of the access caches: compiled role views (per role and claims) and verified tokens.",
    labelNames: ["cache"] as const,
    registers,
    collect() {
      const s = state();
      this.set({ cache: "views" }, s.views.size);
      this.set({ cache: "tokens" }, s.tokens.size);
    },
  });
  new Gauge({
    name: "users_listing_access_cache_bytes",
    help: "Bytes the access caches are counted as holding, by cache (each under its budget).",
    labelNames: ["cache"] as const,
    registers,
    collect() {
      const s = state();
      this.set({ cache: "views" }, s.views.bytes);
      this.set({ cache: "tokens" }, s.tokens.bytes);
    },
  });
  return { denials, reloads };
}

export { PolicyError };
