/**
 * The demo page's subscription to change events (docs/api.md "GET /api/users/changes"): an
 * `EventSource` on `<base>/changes` that calls back on every `change` event, so that both
 * clients refresh what they show without any user action. A browser's `EventSource` cannot
 * send headers, so the page's credential (api.ts `currentCredential`) travels as the
 * `access_token` query parameter, which only that route accepts; it reconnects by itself and
 * resumes with `Last-Event-ID`.
 */
import { currentCredential } from "./api.ts";

/** What a change event says (docs/api.md "GET /api/users/changes"). */
export interface ChangeEvent {
  /** The role's version token after the change. */
  version: string;
  /** Keys of the role's rows that changed (at most 1,000), or null: refresh everything. */
  keys: (number | string)[] | null;
  more: boolean;
}

/** The URL of the change events under `base`, with the page's credential as `access_token` when it has one. */
export function changesUrl(base: string, credential: string = currentCredential()): string {
  return credential === "" ? `${base}/changes` : `${base}/changes?access_token=${encodeURIComponent(credential)}`;
}

/**
 * A refresh that runs at most once at a time: asked again while one runs, it runs once more
 * when that one ends (however many times it was asked meanwhile), so that a burst of changes
 * costs two refreshes, not one per change.
 * @param run the refresh; resolves when its answer is shown
 */
export function coalesced(run: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const go = (): void => {
    running = true;
    again = false;
    run()
      .catch(() => {})
      .finally(() => {
        running = false;
        if (again) go();
      });
  };
  return () => {
    if (running) again = true;
    else go();
  };
}

/**
 * Subscribes to the change events of `base` and calls `onChange` with each (the server sends a
 * role only the changes of rows it may see).
 * @returns the EventSource (closed by the caller, or when the page goes)
 */
export function subscribeChanges(base: string, onChange: (change: ChangeEvent) => void): EventSource {
  const events = new EventSource(changesUrl(base));
  events.addEventListener("change", (event) => {
    onChange(JSON.parse((event as MessageEvent<string>).data) as ChangeEvent);
  });
  return events;
}
