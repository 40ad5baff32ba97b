/**
 * Test helper: a Server-Sent Events client over fetch (a real socket), keeping every event and
 * comment it reads, parsed as the EventSource specification reads the stream (`id:`, `event:`,
 * `data:` lines; a blank line ends an event; a line starting with `:` is a comment).
 */

/** One event read. */
export interface ReadEvent {
  id: string | null;
  event: string;
  data: unknown;
}

/** An open stream and what it has read so far. */
export interface EventStreamClient {
  status: number;
  headers: Headers;
  /** The events read so far, in order. */
  events: ReadEvent[];
  /** Comment lines read so far (without the `:`). */
  comments: string[];
  /** True once the server ended the stream (cleanly or not). */
  ended: () => boolean;
  /** How the stream ended: "done" (cleanly), "error", or null while open. */
  end: () => "done" | "error" | null;
  /** Resolves once `match` holds for what is read (checked after each chunk); rejects when the stream ends first. */
  until: (match: () => boolean, what: string) => Promise<void>;
  /** Resolves with the `n`-th event (0-based) once read. */
  event: (n: number) => Promise<ReadEvent>;
  /** Closes the connection. */
  close: () => void;
}

/**
 * Opens `url` with `headers` and reads it as an event stream in the background. A non-200 answer
 * is returned with its status and no events (its body read as text into `comments[0]`).
 */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStreamClient> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const events: ReadEvent[] = [];
  const comments: string[] = [];
  let ending: "done" | "error" | null = null;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  if (response.status !== 200 || response.body === null) {
    comments.push(await response.text());
    ending = "done";
  } else {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let current: { id: string | null; event: string; data: string[] } = { id: null, event: "message", data: [] };
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
          let newline = text.indexOf("\n");
          while (newline >= 0) {
            const line = text.slice(0, newline);
            text = text.slice(newline + 1);
            if (line === "") {
              if (current.data.length > 0) events.push({ id: current.id, event: current.event, data: JSON.parse(current.data.join("\n")) });
              current = { id: null, event: "message", data: [] };
            } else if (line.startsWith(":")) comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(":");
              const field = line.slice(0, colon);
              const value = line.slice(colon + 1).replace(/^ /, "");
              if (field === "id") current.id = value;
              else if (field === "event") current.event = value;
              else if (field === "data") current.data.push(value);
            }
            newline = text.indexOf("\n");
          }
          wake();
        }
        ending = "done";
      } catch {
        ending = "error";
      }
      wake();
    })();
  }
  const until = (match: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (match()) {
          waiters.delete(check);
          resolve();
        } else if (ending !== null) {
          waiters.delete(check);
          reject(new Error(`the stream ended (${ending}) before ${what}; read: ${JSON.stringify(events)}`));
        }
      };
      waiters.add(check);
      check();
    });
  return {
    status: response.status,
    headers: response.headers,
    events,
    comments,
    ended: () => ending !== null,
    end: () => ending,
    until,
    async event(n) {
      await until(() => events.length > n, `event ${n}`);
      return events[n];
    },
    close: () => abort.abort(),
  };
}
