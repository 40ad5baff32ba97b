/**
 * Which keys of a batch changed for a role (INTERFACE.md "Live change events"; docs/api.md
 * "GET /api/users/changes"): a key counts when the role's record of it — the row cut to its
 * columns, if the role's filter lets it see the row — differs between the state before the
 * batch and the state after it. A row that enters or leaves the role's rows counts; a change to
 * a column the role does not see, or to a row it never sees, does not (the tenant rule). The
 * rows are found by the engine itself (the role's filter ANDed with a set filter on the key),
 * so the role's rule lives in one place: its filter.
 */
import type { RoleView } from "../access/view.ts";
import { type Engine, executeQuery, extraRecords } from "../engine/execute.ts";
import { compileColumnModel } from "../kinds/operators.ts";
import { KINDS } from "../kinds/registry.ts";
import { withinScope } from "../query/columns.ts";
import type { Predicate } from "../query/types.ts";
import type { ChangeBatch } from "../live/changes.ts";
import { columnSpec } from "../schema/kinds.ts";
import { writeProjected } from "../store/record-fields.ts";
import { recordIn } from "../store/records.ts";

/** Most keys an event lists (INTERFACE.md "Live change events": at most 1,000, else `null` and `more`). */
export const MAX_EVENT_KEYS = 1000;

/** Keys tested in one engine query: a set filter of at most this many values. */
const KEYS_PER_QUERY = 1000;

/** The keys a batch touches, each once, in first-touch order: an upsert's record key, a delete's key. */
export function batchKeys(batch: ChangeBatch, keyId: string): (number | string)[] {
  const seen = new Set<string>();
  const keys: (number | string)[] = [];
  for (const change of batch.changes) {
    const key = change.op === "upsert" ? (change.record[keyId] as number | string) : change.key;
    const text = String(key);
    if (seen.has(text)) continue;
    seen.add(text);
    keys.push(key);
  }
  return keys;
}

/**
 * The predicate "the key is one of `keys`": the key column's set filter (kinds/operators.ts,
 * the same one AG Grid's set filter model compiles to; a text key's values are compared folded,
 * so it may also match keys that fold alike: callers keep only the keys they asked for).
 * @throws Error when the key's kind refuses a value (a batch the engine applied holds none)
 */
function keyIn(engine: Engine, keys: readonly (number | string)[]): Predicate {
  const schema = engine.store.schema;
  const spec = columnSpec(schema, schema.key);
  if (spec === undefined) throw new Error(`the schema has no key column "${schema.key}"`);
  const problems: string[] = [];
  const test = compileColumnModel(KINDS[spec.kind], spec, { filterType: "set", values: keys.map(String) }, `/${spec.id}`, (_at, detail) => problems.push(detail));
  if (test === null) throw new Error(`the key values of a batch do not make a set filter: ${problems.join("; ")}`);
  return { kind: "column", column: spec.id, test };
}

const decoder = new TextDecoder();

/**
 * The role's records of `keys` in `engine`'s state: key (as text) → the record cut to the
 * role's columns (JSON text), for each key whose row the role may see.
 * @param keys at most {@link KEYS_PER_QUERY}
 */
function visibleRecords(engine: Engine, view: RoleView | null, keys: readonly (number | string)[]): Map<string, string> {
  const wanted = new Set(keys.map(String));
  const filter = withinScope(view?.filter ?? null, keyIn(engine, keys));
  // a text key's folded set may match a few more rows than asked: every one is read (the window
  // is allocated at its limit: asked for the keys first, then for the total when it is more)
  let page = executeQuery(engine, { filter, sort: [], offset: 0, limit: keys.length });
  if (page.total > page.rows.length) page = executeQuery(engine, { filter, sort: [], offset: 0, limit: page.total });
  const out = new Map<string, string>();
  const extra = extraRecords(engine);
  const span = new Float64Array(2);
  const keyId = engine.store.schema.key;
  for (let i = 0; i < page.rows.length; i++) {
    const bytes = recordIn(engine.store.records, extra, page.rows[i], span);
    let text: string;
    if (view === null || view.projection === null) text = decoder.decode(bytes.subarray(span[0], span[1]));
    else {
      const cut = new Uint8Array(span[1] - span[0] + 2);
      text = decoder.decode(cut.subarray(0, writeProjected(bytes, span[0], span[1], view.projection, cut, 0)));
    }
    const key = String((JSON.parse(text) as Record<string, unknown>)[keyId]);
    if (wanted.has(key)) out.set(key, text);
  }
  return out;
}

/** What a batch changed for one role: the keys (at most {@link MAX_EVENT_KEYS}), or null with `more` when there are more. */
export interface VisibleChange {
  /** Keys of the role's rows inserted, updated or deleted, in the batch's order; null when more than {@link MAX_EVENT_KEYS}. */
  keys: (number | string)[] | null;
  more: boolean;
}

/**
 * What a batch changed that a role may see, from the engine states before and after it (see the
 * module comment); null when nothing (the role is then told nothing). Without a view (access
 * control off) every key the batch touches counts, with no query.
 * @param keys the batch's keys ({@link batchKeys}), as the key's kind holds them
 */
export function visibleChange(before: Engine, after: Engine, view: RoleView | null, keys: readonly (number | string)[]): VisibleChange | null {
  if (keys.length === 0) return null;
  if (view === null) return keys.length > MAX_EVENT_KEYS ? { keys: null, more: true } : { keys: [...keys], more: false };
  const changed: (number | string)[] = [];
  for (let from = 0; from < keys.length; from += KEYS_PER_QUERY) {
    const chunk = keys.slice(from, from + KEYS_PER_QUERY);
    const was = visibleRecords(before, view, chunk);
    const now = visibleRecords(after, view, chunk);
    for (const key of chunk) {
      const text = String(key);
      const a = was.get(text);
      const b = now.get(text);
      if (a === b) continue;
      // the key as the role's record shows it (a number key's number), else as the batch gave it
      const shown = JSON.parse((b ?? a) as string)[after.store.schema.key] as number | string;
      changed.push(shown);
      if (changed.length > MAX_EVENT_KEYS) return { keys: null, more: true };
    }
  }
  return changed.length === 0 ? null : { keys: changed, more: false };
}
