/**
 * What a replica answers while it waits for its first snapshot (`serve --source`, docs/api.md
 * "Operations"): every request, `/readyz` included, is a 503 problem+json (a load balancer sends
 * nothing here yet). Once a snapshot is in, the real server takes this socket over
 * (server.ts `ServeOptions.listener`): the port never closes, and the clients' keep-alive
 * connections carry on to the real handlers.
 */
import type { Server } from "bun";
import { Elysia } from "elysia";
import type { Logger } from "pino";
import { type ListenOptions, bunListenOptions, listenUrl } from "./listen.ts";
import { problemResponse } from "../service/responses.ts";

/** A listening placeholder: its URL, its bound port, and Bun's server to hand over. */
export interface StartingServer {
  url: string;
  port: number;
  server: Server<unknown>;
}

/**
 * Listens (an Elysia app with no route) with the service's socket options (listen.ts `bunListenOptions`: port 0 picks a free
 * one) and answers 503 NOT_READY, `state: "starting"`, to everything.
 * @param status more fields for the 503 body (a replica's `source`: why it has nothing to serve yet)
 * @throws Error when the port cannot be bound
 */
export function startStartingServer(listen: ListenOptions, logger: Logger, status: () => Record<string, unknown> = () => ({})): StartingServer {
  // no route: every request reaches Elysia's not-found answer, the 503
  const app = new Elysia({ aot: true }).onError(() => problemResponse("NOT_READY", "the server is starting: no snapshot is serving yet", [], {}, { state: "starting", ...status() }));
  app.listen(bunListenOptions(listen));
  const server = app.server as Server<unknown>;
  const url = listenUrl(listen.host, server.port as number);
  logger.info({ url, ready: false }, "listening");
  return { url, port: server.port as number, server };
}
