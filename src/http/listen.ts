/**
 * How every server of this service binds its socket (server.ts `startServer`, the placeholder
 * of starting.ts): one set of socket options, so that a server taking another's socket over
 * keeps its limits.
 */
import { MAX_BODY_BYTES } from "../service/body.ts";

/**
 * Bun's own request body limit, in bytes: a small multiple of {@link MAX_BODY_BYTES}, so that
 * Bun never buffers more than this for any request. The POST handler refuses bodies over
 * MAX_BODY_BYTES itself, with a problem+json 413, while they stream in (service/body.ts); a body
 * *declared* (Content-Length) larger than this limit is refused by Bun before any handler runs,
 * with a bare `413 Payload Too Large` and `Connection: close` (no body).
 */
export const BUN_MAX_REQUEST_BODY_BYTES = 4 * MAX_BODY_BYTES;

/** Seconds a keep-alive connection may stay idle before Bun closes it. */
const IDLE_TIMEOUT_S = 30;

/** Where and how a server listens: what cannot change once the socket is bound. */
export interface ListenOptions {
  port: number;
  host: string;
  /** Let several processes listen on one port (SO_REUSEPORT). */
  reusePort?: boolean;
}

/**
 * The socket options Elysia's `listen` hands to Bun.serve (app.ts, server.ts): the port and host, SO_REUSEPORT, Bun's body limit
 * ({@link BUN_MAX_REQUEST_BODY_BYTES}) and the keep-alive idle timeout. Every server of this
 * service binds with these, the placeholder of starting.ts included, so that the server that
 * takes its socket over (server.ts `ServeOptions.listener`) keeps the same limits.
 */
export function bunListenOptions(listen: ListenOptions) {
  return {
    port: listen.port,
    hostname: listen.host,
    reusePort: listen.reusePort,
    maxRequestBodySize: BUN_MAX_REQUEST_BODY_BYTES,
    idleTimeout: IDLE_TIMEOUT_S,
    // No hot-reload socket or dev bundling in a served process.
    development: false,
  };
}

/**
 * The URL a server bound to `host:port` answers at, e.g. `http://127.0.0.1:3000`; an IPv6 host
 * goes in brackets (`http://[::1]:3000`, RFC 3986 §3.2.2).
 * @param port the bound port (not 0: the one the kernel picked)
 */
export function listenUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * Checks that this machine can listen on `host` (`serve --host` / `HOST`), before any work: a
 * host that is not one of its addresses, or a name that does not resolve, is refused with the
 * host named instead of the runtime's `EINVAL … listen`.
 * @param from where the host came from, for the message (`--host` or `HOST`)
 * @throws Error naming the host and the cause
 */
export function checkListenHost(host: string, from: string): void {
  try {
    const probe = Bun.listen({ hostname: host, port: 0, socket: { data() {} } });
    probe.stop(true);
  } catch {
    throw new Error(`${from} ${JSON.stringify(host)}: this machine cannot listen there: give one of its addresses (127.0.0.1, 0.0.0.0, ::) or a name that resolves to one`);
  }
}
