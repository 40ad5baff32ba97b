/**
 * The resource name (docs/api.md "Resource name"): every data route is served under
 * `/api/<name>` (`users` unless `serve --resource NAME` or `RESOURCE` says otherwise), and an
 * export's file is named after it.
 */

/** The resource name when none is given (docs/api.md "Resource name"). */
export const DEFAULT_RESOURCE = "users";

/** What a resource name may be: a lower-case letter, then up to 63 lower-case letters, digits, `_` or `-`. */
const RESOURCE_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

/**
 * A resource name checked against {@link RESOURCE_NAME}.
 * @param value the name as given
 * @param source where it came from (`--resource`, `RESOURCE`), for the message
 * @throws Error `--resource must be a lower-case letter followed by at most 63 lower-case letters, digits, "_" or "-" (got "Users")`
 */
export function parseResourceName(value: string, source: string): string {
  if (!RESOURCE_NAME.test(value)) {
    const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
    throw new Error(`${source} must be a lower-case letter followed by at most 63 lower-case letters, digits, "_" or "-" (got ${JSON.stringify(shown)})`);
  }
  return value;
}

/** The paths of one resource's routes (docs/api.md "Endpoints"). */
export interface ResourcePaths {
  /** The resource name, e.g. `users`. */
  name: string;
  /** The listing: `/api/<name>`. */
  rows: string;
  /** `/api/<name>/schema`. */
  schema: string;
  /** `/api/<name>/facets`. */
  facets: string;
  /** `/api/<name>/export`. */
  export: string;
  /** `/api/<name>/explain`. */
  explain: string;
  /** `/api/<name>/changes`: the change events (docs/api.md "GET /api/users/changes"). */
  changes: string;
}

/**
 * The paths of the resource `name` (already checked by {@link parseResourceName}).
 * @throws Error for a name {@link parseResourceName} refuses
 */
export function resourcePaths(name: string = DEFAULT_RESOURCE): ResourcePaths {
  const rows = `/api/${parseResourceName(name, "the resource name")}`;
  return { name, rows, schema: `${rows}/schema`, facets: `${rows}/facets`, export: `${rows}/export`, explain: `${rows}/explain`, changes: `${rows}/changes` };
}
