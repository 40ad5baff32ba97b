/**
 * Test helper: HTTP/1.1 over a raw TCP socket (node:net), for what fetch hides — chunked bodies
 * sent slowly, connections closed mid-body, keep-alive connections held open, the exact bytes
 * of an answer.
 */
import { type Socket, connect } from "node:net";

/** A raw connection: what was written, what arrived, and whether the server closed it. */
export interface RawConnection {
  socket: Socket;
  /** Everything received so far, as latin1 text. */
  received: () => string;
  /** True once the socket closed (by either side). */
  closed: () => boolean;
  /** Resolves once `received()` satisfies `test`; rejects when the socket closes first. */
  waitFor: (test: (text: string) => boolean) => Promise<string>;
  /** Resolves once the socket is closed. */
  waitClosed: () => Promise<void>;
}

/**
 * Opens a connection to `host:port`.
 * @throws the connection error (ECONNREFUSED and the like), as a rejection
 */
export function openRaw(port: number, host = "127.0.0.1"): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let text = "";
    let isClosed = false;
    const waiters = new Set<() => void>();
    const notify = () => {
      for (const w of waiters) w();
    };
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      notify();
    });
    socket.on("close", () => {
      isClosed = true;
      notify();
    });
    socket.on("error", () => {
      // A reset after the server refused or closed: `closed()` tells the test.
    });
    socket.once("connect", () => {
      // woken by each chunk and by the close: no time bound, a test that waits in vain ends by its own timeout
      const when = <T>(ready: () => T | undefined, what: string): Promise<T> =>
        new Promise((res, rej) => {
          const check = () => {
            const value = ready();
            if (value !== undefined) {
              waiters.delete(check);
              res(value);
            } else if (isClosed) {
              waiters.delete(check);
              rej(new Error(`the connection closed before ${what}; received: ${JSON.stringify(text.slice(0, 300))}`));
            }
          };
          waiters.add(check);
          check();
        });
      resolve({
        socket,
        received: () => text,
        closed: () => isClosed,
        waitFor: (test) => when(() => (test(text) ? text : undefined), "an answer"),
        waitClosed: () => when(() => (isClosed ? true : undefined), "the close").then(() => {}),
      });
    });
    socket.once("error", reject);
  });
}

/** One parsed HTTP/1.1 answer: status, headers (lower-case names) and body text. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Parses the first answer in `text` (Content-Length framing, or no body).
 * @returns the answer, or undefined while it is incomplete
 */
export function parseAnswer(text: string): RawAnswer | undefined {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers["content-length"] ?? 0);
  const body = text.slice(end + 4, end + 4 + length);
  if (body.length < length) return undefined;
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

/** A chunk of a chunked body (RFC 9112 §7.1): size in hex, CRLF, bytes, CRLF. */
export function chunk(bytes: string | Uint8Array): Buffer {
  const data = typeof bytes === "string" ? Buffer.from(bytes) : Buffer.from(bytes);
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]);
}

/** The last chunk of a chunked body. */
export const LAST_CHUNK = "0\r\n\r\n";
