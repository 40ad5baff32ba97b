/**
 * Which keys of a batch changed for a role (docs/api.md "GET /api/users/changes"; docs/api.md
 * "GET /api/users/changes"): a key counts when the role's record of it — the row cut to its
 * columns, if the role's filter lets it see the row — differs between the state before the
 * batch and the state after it. A row that enters or leaves the role's rows counts; a change to
 * a column the role does not see, or to a row it never sees, does not (the tenant rule).
 *
 * The batch's rows are read by key before and after it is applied (live/delta.ts
 * `currentRecord`: a key lookup, never a pass over the table), then built into two small stores
 * of those rows alone, over which the engine runs each role's filter: the role's rule stays its
 * filter, evaluated by the same code as every request's, at a cost that grows with the batch,
 * not with the table.
 */
import type { RoleView } from "../access/view.ts";
import { type Engine, createEngine, executeQuery } from "../engine/execute.ts";
import type { ChangeBatch } from "../live/changes.ts";
import { type KeyValue, currentRecord } from "../live/delta.ts";
import type { Schema } from "../schema/kinds.ts";
import { tableOfObjects } from "../snapshot/objects.ts";
import { buildStore } from "../store/build.ts";
import { recordAt } from "../store/rows-json.ts";

/** Most keys an event lists (docs/api.md "GET /api/users/changes": at most 1,000, else `null` and `more`). */
export const MAX_EVENT_KEYS = 1000;

/** The rows a batch touches, read from one state: key (as text) → the whole record, or null where no live row holds the key. */
export type BatchRows = Map<string, Record<string, unknown> | null>;

/** The keys a batch touches, each once, in first-touch order (an upsert's record key, a delete's key), as the batch gives them. */
export function batchKeys(batch: ChangeBatch, schema: Schema): KeyValue[] {
  const keyId = schema.key;
  const seen = new Set<string>();
  const keys: KeyValue[] = [];
  for (const change of batch.changes) {
    // as the batch gives it: the value live/delta.ts applies the change to
    const key = change.op === "upsert" ? (change.record[keyId] as KeyValue) : change.key;
    const text = String(key);
    if (seen.has(text)) continue;
    seen.add(text);
    keys.push(key);
  }
  return keys;
}

/**
 * The records of `keys` in the state `engine` serves, each found by its key.
 * @param keys as {@link batchKeys} gives them
 */
export function batchRows(engine: Engine, keys: readonly KeyValue[]): BatchRows {
  const rows: BatchRows = new Map();
  for (const key of keys) rows.set(String(key), currentRecord(engine.store, engine.live, key));
  return rows;
}

/** The batch's rows of one state as a small engine of their own (null when none is live), for the roles' filters. */
function smallEngine(schema: Schema, rows: BatchRows): Engine | null {
  const records: Record<string, unknown>[] = [];
  for (const record of rows.values()) if (record !== null) records.push(record);
  if (records.length === 0) return null;
  return createEngine(buildStore(tableOfObjects(records, { key: schema.key, columns: schema.columns })));
}

/** The records a role sees among a small engine's rows: key (as text) → the record cut to the role's columns, as JSON text. */
function seenBy(engine: Engine | null, view: RoleView): Map<string, string> {
  const seen = new Map<string, string>();
  if (engine === null) return seen;
  const ids = view.schema.columns.map((c) => c.id);
  const page = executeQuery(engine, { filter: view.filter, sort: [], offset: 0, limit: engine.store.rowCount });
  for (let i = 0; i < page.rows.length; i++) {
    const record = recordAt(engine.store, page.rows[i]);
    const cut: Record<string, unknown> = {};
    for (const id of ids) cut[id] = record[id];
    seen.set(String(record[engine.store.schema.key]), JSON.stringify(cut));
  }
  return seen;
}

/** What a batch changed for one role: the keys (at most {@link MAX_EVENT_KEYS}), or null with `more` when there are more. */
export interface VisibleChange {
  /** Keys of the role's rows inserted, updated or deleted, in the batch's order; null when more than {@link MAX_EVENT_KEYS}. */
  keys: KeyValue[] | null;
  more: boolean;
}

/** A batch's rows before and after it, ready for the roles' questions ({@link visibleChange}). */
export interface BatchChange {
  keys: KeyValue[];
  before: BatchRows;
  after: BatchRows;
  schema: Schema;
  /** The small engines, made on the first restricted role's question. */
  engines: { before: Engine | null; after: Engine | null } | null;
}

/** A batch's change from its rows read before it was applied and after (see the module comment). */
export function batchChange(schema: Schema, keys: KeyValue[], before: BatchRows, after: BatchRows): BatchChange {
  return { keys, before, after, schema, engines: null };
}

/** True when a role is told of every key a batch touches, with no rows read: no view (access control off), or one of every row and column. */
export function seesEverything(view: RoleView | null): boolean {
  return view === null || view.unrestricted;
}

/**
 * What a batch changed that a role may see; null when nothing (the role is then told nothing).
 * A role that sees every row and column ({@link seesEverything}) is told of every key the batch
 * touches; another of each key whose record, cut to its columns among its rows, differs.
 * @param keys the batch's keys ({@link batchKeys})
 * @param change its rows before and after; null only when every role listening sees everything (no rows were read)
 * @throws Error for a role limited to some rows and no rows read (a caller's mistake)
 */
export function visibleChange(keys: readonly KeyValue[], change: BatchChange | null, view: RoleView | null): VisibleChange | null {
  if (keys.length === 0) return null;
  if (seesEverything(view) || view === null) return keys.length > MAX_EVENT_KEYS ? { keys: null, more: true } : { keys: [...keys], more: false };
  // never every key for a role of some rows: its rows were to be read (change-feed.ts `prepare`)
  if (change === null) throw new Error("internal: a batch's rows were not read for a role limited to some rows");
  change.engines ??= { before: smallEngine(change.schema, change.before), after: smallEngine(change.schema, change.after) };
  const was = seenBy(change.engines.before, view);
  const now = seenBy(change.engines.after, view);
  const changed: KeyValue[] = [];
  for (const key of change.keys) {
    const text = String(key);
    if (was.get(text) === now.get(text)) continue;
    changed.push(key);
    if (changed.length > MAX_EVENT_KEYS) return { keys: null, more: true };
  }
  return changed.length === 0 ? null : { keys: changed, more: false };
}
