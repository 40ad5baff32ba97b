/**
 * The change feed of one server process (docs/api.md "GET /api/users/changes"; docs/api.md
 * "GET /api/users/changes"): Server-Sent Events streams that tell each role which of its rows a
 * batch inserted, updated or deleted, and that a snapshot swap changed its rows.
 *
 * - The server tells the feed of each batch before it applies it ({@link ChangeFeed.prepare}: the
 *   rows it is about to change, read by key) and once it is applied ({@link ChangeFeed.applied}),
 *   and of each snapshot swapped in
 *   ({@link ChangeFeed.swapped}); the feed works out, per role with a stream open (or open a
 *   little while ago), what changed for that role (visible-changes.ts) and holds it, so that a
 *   reconnect with `Last-Event-ID` gets what it missed.
 * - {@link ChangeFeed.open} answers a request with a streaming `Response`: `event: version` first,
 *   then the missed events, then one `event: change` per batch or swap that changes a row the
 *   role may see. Every event's `id` is the role's version token after it ({@link roleVersion}).
 * - Bounds: at most `maxStreams` streams (a ProblemError `TOO_MANY_STREAMS` beyond it), each
 *   queueing at most `maxQueuedBytes` unread bytes (a slower reader is dropped), at most
 *   {@link MAX_HELD_EVENTS} events held per role, at most {@link MAX_IDLE_ROLES} roles held
 *   without a stream open.
 * Nothing here knows HTTP routing: the route hands in the request's view, its `Last-Event-ID`
 * and its abort signal, and returns the Response.
 */
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import type { RoleView } from "../access/view.ts";
import type { Engine } from "../engine/execute.ts";
import { answerVersions } from "../engine/view-version.ts";
import type { ChangeBatch } from "../live/changes.ts";
import type { Schema } from "../schema/kinds.ts";
import { ProblemError } from "../query/errors.ts";
import { type BatchRows, type VisibleChange, batchChange, batchKeys, batchRows, seesEverything, visibleChange } from "./visible-changes.ts";
import type { KeyValue } from "../live/delta.ts";

/** Default bound on open event streams per process (`--max-event-streams`, env `MAX_EVENT_STREAMS`; docs/api.md "GET /api/users/changes"). */
export const DEFAULT_MAX_EVENT_STREAMS = 1000;

/** Default time between two keep-alive comments on every stream, in ms (docs/api.md "GET /api/users/changes": every 15 s). */
export const DEFAULT_KEEPALIVE_MS = 15_000;

/**
 * Default bound on the bytes a stream may have queued and not yet written to its socket: a
 * reader that falls this far behind is dropped (an event lists at most 1,000 keys: this holds a
 * few of the largest).
 */
export const DEFAULT_MAX_QUEUED_BYTES = 1024 * 1024;

/** Most events held per role for `Last-Event-ID` resumption; an older id gets one `"keys": null` change. */
export const MAX_HELD_EVENTS = 1024;

/** Most roles whose events are still worked out and held with no stream open (for a reconnect). */
export const MAX_IDLE_ROLES = 256;

/**
 * The role's version token of an engine state: the `V` of every event and its `id`, the same
 * token the role's entity tags build on (engine/view-version.ts `answerVersions`: a restricted
 * role's token of its own rows, which no other row's change moves; the engine's version id for a
 * role that sees everything, or with access control off).
 */
export function roleVersion(engine: Engine, view: RoleView | null): string {
  return answerVersions(engine, view).tag;
}

/** Options of {@link createChangeFeed}. */
export interface ChangeFeedOptions {
  logger: Logger;
  /** Most streams open at once in this process (default {@link DEFAULT_MAX_EVENT_STREAMS}). */
  maxStreams?: number;
  /** Time between keep-alive comments, in ms (default {@link DEFAULT_KEEPALIVE_MS}; tests set it short). */
  keepAliveMs?: number;
  /** Unread bytes a stream may queue before it is dropped (default {@link DEFAULT_MAX_QUEUED_BYTES}). */
  maxQueuedBytes?: number;
  /** Where the feed's metrics are registered (the server's registry); absent: none. */
  registry?: Registry;
  /** Prefix of the metric names (the server's, e.g. `users_listing_`). */
  metricPrefix?: string;
}

/** What the feed tells a role: one `change` event (or a resumption anchor that is never sent). */
interface Held {
  /** The role's version token after it: the event's `id`. */
  id: string;
  /** The event's line (`id:`, `event:`, `data:`), or null for an anchor: a version a stream was told on connect. */
  text: string | null;
}

/** One open stream. */
interface Stream {
  /** Queues an event's text; false when the stream is gone or was dropped meanwhile. */
  send: (text: string) => boolean;
  /** Ends the stream cleanly (what is queued is still written). */
  end: () => void;
}

/** A role (a view's tag; "" without access control) and what the feed holds for it. */
interface Subscription {
  view: RoleView | null;
  streams: Set<Stream>;
  /** Its events in order, oldest first; at most {@link MAX_HELD_EVENTS}. */
  held: Held[];
  /** The version token it was first held at, while no event was dropped from `held`; null since. */
  start: string | null;
}

/** A batch about to be applied: its keys and their rows before it ({@link ChangeFeed.prepare}). */
export interface PreparedBatch {
  lsn: string;
  keys: KeyValue[];
  /** Their rows before the batch; null when every role listening sees everything (nothing read). */
  before: BatchRows | null;
}

/** The change feed (see the module comment). */
export interface ChangeFeed {
  /**
   * A Server-Sent Events answer for a request of `view` (null: access control off) over the
   * state `engine` serves: `version` first, then the events missed since `lastEventId` (or one
   * `"keys": null` change when they are no longer held), then the live events, until the client
   * goes (`signal`), it falls too far behind, or the feed is closed.
   * @throws ProblemError `TOO_MANY_STREAMS` when `maxStreams` are open; `NOT_READY` once closed
   */
  open: (engine: Engine, view: RoleView | null, lastEventId: string | null, signal: AbortSignal) => Response;
  /**
   * Reads the rows `batch` is about to change in the state `engine` serves (call it just before
   * applying the batch to that state); null when no role is listening (nothing is read).
   */
  prepare: (engine: Engine, batch: ChangeBatch) => PreparedBatch | null;
  /** The prepared batch was applied: `after` serves from now on. Does nothing for null. */
  applied: (prepared: PreparedBatch | null, after: Engine) => void;
  /**
   * A snapshot was swapped in: `after` serves from now on. `rowsChanged` false when the new
   * state holds exactly the rows the old one did (a compaction: the snapshot at the position
   * the old state had reached): nothing is sent.
   */
  swapped: (before: Engine, after: Engine, rowsChanged: boolean) => void;
  /** Streams open now. */
  streams: () => number;
  /** Ends every stream cleanly and refuses new ones (the drain: SIGTERM). */
  close: () => void;
}

const encoder = new TextEncoder();

/** The text of an event (the Server-Sent Events format: `id:`, `event:`, `data:` lines, a blank line). */
function eventText(id: string, event: "version" | "change", data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** True when two schemas are the same columns, kinds, values, key and partition (a swapped-in snapshot's schema is a new object). */
function sameSchema(a: Schema, b: Schema): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** A `change` event telling the role to refresh everything. */
function refreshAll(version: string): string {
  return eventText(version, "change", { version, keys: null, more: true });
}

/**
 * Creates a process's change feed.
 */
export function createChangeFeed(options: ChangeFeedOptions): ChangeFeed {
  const { logger } = options;
  const maxStreams = options.maxStreams ?? DEFAULT_MAX_EVENT_STREAMS;
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS;
  const maxQueuedBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  const subscriptions = new Map<string, Subscription>();
  let open = 0;
  let closed = false;
  let timer: ReturnType<typeof setInterval> | null = null;
  const registers = options.registry === undefined ? [] : [options.registry];
  const prefix = options.metricPrefix ?? "";
  new Gauge({ name: `${prefix}event_streams_open`, help: "Change event streams (GET /api/<resource>/changes) open now.", registers, collect() { this.set(open); } });
  const sent = new Counter({ name: `${prefix}events_sent_total`, help: "Change events (version and change) queued to event streams.", registers });
  const dropped = new Counter({ name: `${prefix}event_streams_dropped_total`, help: "Event streams dropped because their reader fell too far behind.", registers });

  /** The keep-alive comment to every stream, every `keepAliveMs` while any is open. */
  const keepAlive = () => {
    for (const subscription of subscriptions.values()) for (const stream of [...subscription.streams]) stream.send(": keep-alive\n\n");
  };

  /** Drops roles with no stream open beyond the {@link MAX_IDLE_ROLES} most recently used. */
  const trimIdle = () => {
    let idle = 0;
    for (const subscription of subscriptions.values()) if (subscription.streams.size === 0) idle++;
    for (const [tag, subscription] of subscriptions) {
      if (idle <= MAX_IDLE_ROLES) break;
      if (subscription.streams.size > 0) continue;
      subscriptions.delete(tag);
      idle--;
    }
  };

  /** Holds an event (or an anchor) for a role, dropping the oldest beyond {@link MAX_HELD_EVENTS}. */
  const hold = (subscription: Subscription, held: Held) => {
    subscription.held.push(held);
    if (subscription.held.length > MAX_HELD_EVENTS) {
      subscription.held.splice(0, subscription.held.length - MAX_HELD_EVENTS);
      subscription.start = null;
    }
  };

  /** Holds an event for a role and sends it to each of its streams. */
  const publish = (subscription: Subscription, id: string, text: string) => {
    hold(subscription, { id, text });
    for (const stream of [...subscription.streams]) if (stream.send(text)) sent.inc();
  };

  /** The events a role missed since `lastEventId`, or null when they are not held (see {@link ChangeFeed.open}). */
  const missed = (subscription: Subscription, lastEventId: string): string[] | null => {
    const held = subscription.held;
    let at = held.length - 1;
    while (at >= 0 && held[at].id !== lastEventId) at--;
    if (at < 0 && subscription.start !== lastEventId) return null;
    const texts: string[] = [];
    for (let i = at + 1; i < held.length; i++) {
      const text = held[i].text;
      if (text !== null) texts.push(text);
    }
    return texts;
  };

  const startStream = (subscription: Subscription, first: string[], signal: AbortSignal): Response => {
    let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
    let done = false;
    const remove = () => {
      if (done) return;
      done = true;
      subscription.streams.delete(stream);
      open--;
      if (open === 0 && timer !== null) {
        clearInterval(timer);
        timer = null;
      }
      signal.removeEventListener("abort", remove);
      trimIdle();
    };
    const stream: Stream = {
      send(text) {
        if (done || controller === null) return false;
        const bytes = encoder.encode(text);
        if ((controller.desiredSize ?? 0) < bytes.length) {
          // the reader is this far behind: drop it rather than queue without bound
          dropped.inc();
          logger.warn({ role: subscription.view?.role ?? null, queuedBytes: maxQueuedBytes - (controller.desiredSize ?? 0) }, "dropped a change event stream whose reader fell behind");
          const c = controller;
          remove();
          c.error(new Error("the event stream's reader fell too far behind"));
          return false;
        }
        controller.enqueue(bytes);
        return true;
      },
      end() {
        const c = controller;
        remove();
        try {
          c?.close();
        } catch {
          // already closed or errored by the client going
        }
      },
    };
    const body = new ReadableStream<Uint8Array>(
      {
        start(c) {
          controller = c;
        },
        cancel() {
          remove();
        },
      },
      { highWaterMark: maxQueuedBytes, size: (chunk) => (chunk as Uint8Array).byteLength },
    );
    subscription.streams.add(stream);
    open++;
    signal.addEventListener("abort", remove);
    if (timer === null) {
      timer = setInterval(keepAlive, keepAliveMs);
      timer.unref?.();
    }
    for (const text of first) if (stream.send(text)) sent.inc();
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        // nginx: pass the stream as it comes (deploy/nginx.conf also says so for the route)
        "x-accel-buffering": "no",
      },
    });
  };

  return {
    open(engine, view, lastEventId, signal) {
      if (closed) throw new ProblemError("NOT_READY", "the server is shutting down: connect to another instance");
      if (open >= maxStreams) {
        throw new ProblemError("TOO_MANY_STREAMS", `this server has ${maxStreams} event streams open, its limit (--max-event-streams); try again shortly or another instance`);
      }
      const tag = view === null ? "" : view.tag;
      const version = roleVersion(engine, view);
      let subscription = subscriptions.get(tag);
      if (subscription === undefined || (subscription.view !== null && view !== null && !sameSchema(subscription.view.base, view.base))) {
        subscription = { view, streams: new Set(), held: [], start: version };
      } else {
        // most recently used last (what trimIdle keeps); the view as this request's grant made it
        subscriptions.delete(tag);
        subscription.view = view;
      }
      subscriptions.set(tag, subscription);
      const first = [eventText(version, "version", { version })];
      if (lastEventId !== null && lastEventId !== version) {
        const texts = missed(subscription, lastEventId);
        if (texts === null) first.push(refreshAll(version));
        else first.push(...texts);
      }
      // an anchor: a reconnect from this version resumes here
      const last = subscription.held.length === 0 ? subscription.start : subscription.held[subscription.held.length - 1].id;
      if (last !== version) hold(subscription, { id: version, text: null });
      // a resumption larger than the stream may queue is one refresh instead
      let bytes = 0;
      for (const text of first) bytes += text.length * 3;
      if (bytes > maxQueuedBytes) first.splice(1, first.length - 1, refreshAll(version));
      return startStream(subscription, first, signal);
    },

    prepare(engine, batch) {
      if (subscriptions.size === 0) return null;
      const keys = batchKeys(batch, engine.store.schema);
      let restricted = false;
      for (const subscription of subscriptions.values()) if (!seesEverything(subscription.view)) restricted = true;
      return { lsn: batch.lsn, keys, before: restricted ? batchRows(engine, keys) : null };
    },

    applied(prepared, after) {
      if (prepared === null) return;
      const batch = prepared.before === null ? null : batchChange(after.store.schema, prepared.keys, prepared.before, batchRows(after, prepared.keys));
      for (const subscription of subscriptions.values()) {
        const view = subscription.view;
        const version = roleVersion(after, view);
        let change: VisibleChange | null;
        try {
          change = visibleChange(prepared.keys, batch, view);
        } catch (error) {
          // never a lost event: the role refreshes everything
          logger.error({ err: error, lsn: prepared.lsn }, "working out a batch's changed keys for a role failed; telling it to refresh everything");
          change = { keys: null, more: true };
        }
        if (change === null) continue;
        publish(subscription, version, eventText(version, "change", { version, keys: change.keys, more: change.more }));
      }
    },

    swapped(before, after, rowsChanged) {
      for (const [tag, subscription] of [...subscriptions]) {
        const view = subscription.view;
        if (view !== null && !sameSchema(view.base, after.store.schema)) {
          // another schema: the role's view is made again on its next request (a reconnect)
          for (const stream of [...subscription.streams]) stream.end();
          subscriptions.delete(tag);
          continue;
        }
        const version = roleVersion(after, view);
        if (rowsChanged && version !== roleVersion(before, view)) publish(subscription, version, refreshAll(version));
        else if (version !== roleVersion(before, view)) hold(subscription, { id: version, text: null });
      }
    },

    streams: () => open,

    close() {
      closed = true;
      for (const subscription of subscriptions.values()) for (const stream of [...subscription.streams]) stream.end();
      if (timer !== null) clearInterval(timer);
      timer = null;
    },
  };
}
