/**
 * Test helper: a TCP proxy on loopback in front of a real server (s3rver), whose behaviour the
 * test switches: `forward` passes bytes both ways; `blackhole` accepts connections and passes
 * nothing more, on new and open connections alike (an endpoint that hangs: a GET that never
 * answers); `closed` stops listening and cuts every connection (connection refused), and the
 * next `forward` listens again on the same port.
 */
import { type Server, type Socket, connect, createServer } from "node:net";

/** What the proxy does with traffic. */
export type ProxyMode = "forward" | "blackhole" | "closed";

/** A running proxy. */
export interface TcpProxy {
  port: number;
  /** Switches the mode (resolves once listening again, or closed). */
  mode: (mode: ProxyMode) => Promise<void>;
  stop: () => Promise<void>;
}

/** Starts a proxy to 127.0.0.1:`targetPort`, in `forward` mode, on a free port (or `port`). */
export async function startTcpProxy(targetPort: number, port = 0): Promise<TcpProxy> {
  let mode: ProxyMode = "forward";
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const onConnection = (client: Socket) => {
    track(client);
    if (mode === "blackhole") {
      client.on("data", () => {});
      return;
    }
    const upstream = connect(targetPort, "127.0.0.1");
    track(upstream);
    client.on("data", (data) => {
      if (mode === "forward") upstream.write(data);
    });
    upstream.on("data", (data) => {
      if (mode === "forward") client.write(data);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  };
  let server: Server | null = null;
  const listen = (at: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer(onConnection);
      s.once("error", reject);
      s.listen(at, "127.0.0.1", () => {
        server = s;
        resolve((s.address() as { port: number }).port);
      });
    });
  const close = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = null;
      for (const socket of sockets) socket.destroy();
      if (s === null) resolve();
      else s.close(() => resolve());
    });
  const bound = await listen(port);
  return {
    port: bound,
    mode: async (next) => {
      mode = next;
      if (next === "closed") await close();
      else if (server === null) await listen(bound);
    },
    stop: close,
  };
}
