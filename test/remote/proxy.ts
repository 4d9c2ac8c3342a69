import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy in front of a server, to cut a client's connections on purpose: `outage()`
 * destroys every open connection and holds new ones (accepted, not forwarded) until `restore()`.
 */
export interface CuttableProxy {
  readonly url: string;
  outage(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function cuttableProxy(target: URL): Promise<CuttableProxy> {
  const open = new Set<Socket>();
  let held: Socket[] | undefined;
  const forward = (client: Socket) => {
    const upstream = connect(Number(target.port), target.hostname);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  };
  const server: Server = createServer((client) => {
    if (held) {
      client.pause();
      held.push(client);
      client.on("error", () => client.destroy());
    } else forward(client);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    outage() {
      held = [];
      for (const socket of open) socket.destroy();
      open.clear();
    },
    restore() {
      const waiting = held ?? [];
      held = undefined;
      for (const client of waiting) {
        if (client.destroyed) continue;
        forward(client);
        client.resume();
      }
    },
    async close() {
      for (const socket of [...open, ...(held ?? [])]) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
