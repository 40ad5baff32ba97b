/**
 * The one table of problem kinds (docs/api.md "Errors"; RFC 9457 problem details): each code's
 * title and type URI, and the error that request parsing throws. Which HTTP status a code is
 * answered with is the HTTP layer's (service/responses.ts `PROBLEM_STATUS`).
 */

/** Problem kinds: title and a relative type URI. */
export const PROBLEMS = {
  BAD_PARAMETER: { title: "Invalid query parameter", type: "/problems/bad-parameter" },
  BAD_BODY: { title: "Invalid request body", type: "/problems/bad-body" },
  MALFORMED_JSON: { title: "Malformed JSON body", type: "/problems/malformed-json" },
  GROUPING_NOT_SERVED: { title: "Row grouping and pivoting are not served", type: "/problems/grouping-not-served" },
  UNAUTHORIZED: { title: "Unauthorized", type: "/problems/unauthorized" },
  FORBIDDEN: { title: "Forbidden", type: "/problems/forbidden" },
  NOT_FOUND: { title: "Not found", type: "/problems/not-found" },
  METHOD_NOT_ALLOWED: { title: "Method not allowed", type: "/problems/method-not-allowed" },
  PAYLOAD_TOO_LARGE: { title: "Request body too large", type: "/problems/payload-too-large" },
  UNSUPPORTED_MEDIA_TYPE: { title: "Unsupported media type", type: "/problems/unsupported-media-type" },
  INTERNAL: { title: "Internal server error", type: "/problems/internal" },
  NOT_READY: { title: "Service not ready", type: "/problems/not-ready" },
  QUERY_TIMEOUT: { title: "Query timed out", type: "/problems/query-timeout" },
  OVERLOADED: { title: "Too many queries waiting", type: "/problems/overloaded" },
  TOO_MANY_STREAMS: { title: "Too many event streams", type: "/problems/too-many-streams" },
} as const;

/** A problem kind. */
export type ProblemCode = keyof typeof PROBLEMS;

/** One bad parameter (GET) or body field (POST, as a JSON pointer), with what is wrong. */
export type FieldError = { parameter: string; detail: string } | { pointer: string; detail: string };

/** A request that cannot be answered; becomes an application/problem+json response. */
export class ProblemError extends Error {
  /**
   * @param code the problem kind (its status and title come from {@link PROBLEMS})
   * @param detail a sentence for a person
   * @param errors each bad parameter or field, when the problem is about the request's content
   */
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(detail);
    this.name = "ProblemError";
  }
}

/**
 * Most entries an `errors` list holds (docs/api.md "HTTP envelope", limits): a request with
 * more bad fields gets the first ones and the count of the rest, so an error body never grows
 * with the request.
 */
export const MAX_LISTED_ERRORS = 20;

/** Longest parameter name or JSON pointer an error repeats, in UTF-16 code units. */
const MAX_WHERE = 120;

/** A field error whose parameter name or pointer (a client's column name, say) is cut to {@link MAX_WHERE} characters. */
function shortened(e: FieldError): FieldError {
  const cut = (where: string) => (where.length > MAX_WHERE ? `${where.slice(0, MAX_WHERE)}…` : where);
  return "parameter" in e ? { parameter: cut(e.parameter), detail: e.detail } : { pointer: cut(e.pointer), detail: e.detail };
}

/**
 * A ProblemError for a list of bad fields: the detail names the first {@link MAX_LISTED_ERRORS}
 * of them and says how many more there were; the error keeps the full count.
 * @param errors every bad field found, in request order (at least one)
 */
export function fieldsProblem(code: ProblemCode, errors: FieldError[]): ProblemError {
  const listed = errors.slice(0, MAX_LISTED_ERRORS).map(shortened);
  const more = errors.length - listed.length;
  const detail = listed.map((e) => `${"parameter" in e ? e.parameter : e.pointer}: ${e.detail}`).join("; ");
  return new ProblemError(code, more > 0 ? `${detail}; and ${more} more` : detail, errors.map(shortened));
}

/**
 * Runs a request parser, adding the bad parameters or fields it reports (a BAD_PARAMETER or
 * BAD_BODY problem) to `errors` and returning null, so that a route reading more than one part
 * of a request lists every bad one at once; any other problem passes through.
 */
export function collect<T>(errors: FieldError[], parse: () => T): T | null {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ProblemError) || (error.code !== "BAD_PARAMETER" && error.code !== "BAD_BODY")) throw error;
    errors.push(...error.errors);
    return null;
  }
}
