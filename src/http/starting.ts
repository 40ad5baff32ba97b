/**
 * What a replica answers while it waits for its first snapshot (`serve --source`, docs/api.md
 * "Operations"): every request, `/readyz` included, is a 503 problem+json (a load balancer sends
 * nothing here yet). Stopped, and the port handed to the real server, once a snapshot is in.
 */
import type { Logger } from "pino";
import { problemResponse } from "./responses.ts";

/** A listening placeholder: its URL and port, and how to stop it (resolves once closed). */
export interface StartingServer {
  url: string;
  port: number;
  stop: () => Promise<void>;
}

/** Listens on `host:port` (0: a free port) and answers 503 to everything. */
export function startStartingServer(port: number, host: string, logger: Logger): StartingServer {
  const server = Bun.serve({
    port,
    hostname: host,
    development: false,
    fetch: () => problemResponse("NOT_READY", "the server is starting: no snapshot is serving yet", [], {}, { state: "starting" }),
  });
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`;
  logger.info({ url, ready: false }, "listening");
  return { url, port: server.port as number, stop: () => server.stop(true) };
}
