/**
 * Real parts for the proxy's tests: HTTP and HTTPS servers on loopback addresses other than
 * 127.0.0.1 (the sandbox's NO_PROXY address), a test CA made with the openssl command (not with
 * the code under test), a resolver mapping test names to addresses, and clients that speak to
 * the proxy's Unix socket as pip or curl would.
 */
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, request, type IncomingMessage, type RequestListener, type Server } from "node:http";
import { Agent as HttpsAgent, createServer as createHttpsServer, request as httpsRequest } from "node:https";
import { connect as netConnect, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import type { Resolver } from "../../src/network/index.js";
import { LookupError } from "../../src/network/resolve.js";

export interface TestCa {
  readonly caPath: string;
  readonly caPem: string;
  /** A server key and certificate for `names` (DNS names), signed by the CA. */
  serverCert(names: readonly string[]): { key: string; cert: string };
}

/** A CA made by openssl in `dir`, valid two days. */
export function makeTestCa(dir: string, name = "albedo test CA"): TestCa {
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", `/CN=${name}`, "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign");
  let serial = 0;
  return {
    caPath: join(dir, "ca.pem"),
    caPem: readFileSync(join(dir, "ca.pem"), "utf8"),
    serverCert(names) {
      serial += 1;
      const base = `server${serial}`;
      writeFileSync(join(dir, `${base}.ext`), `subjectAltName=${names.map((dns) => `DNS:${dns}`).join(",")}\nextendedKeyUsage=serverAuth\n`);
      ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${base}.key`, "-out", `${base}.csr`, "-subj", `/CN=${names[0]}`);
      ssl("x509", "-req", "-in", `${base}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", String(1000 + serial), "-out", `${base}.pem`, "-days", "2", "-extfile", `${base}.ext`);
      return { key: readFileSync(join(dir, `${base}.key`), "utf8"), cert: readFileSync(join(dir, `${base}.pem`), "utf8") };
    },
  };
}

export interface TestServer {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

/** An HTTP server (or HTTPS with `tls`) on `host` (127.0.0.2 and up), on an ephemeral port. */
export async function startServer(host: string, handler: RequestListener, tls?: { key: string; cert: string }): Promise<TestServer> {
  const server = tls ? createHttpsServer(tls, handler) : createHttpServer(handler);
  server.listen(0, host);
  await once(server, "listening");
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A handler answering with the request as JSON: method, url, and its headers as received. */
export const echoHandler: RequestListener = (req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = JSON.stringify({ method: req.method, url: req.url, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString() });
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
};

/** A resolver answering from `names` (a name to one or more addresses); any other name has no address. */
export function mapResolver(names: Readonly<Record<string, string | readonly string[]>>): Resolver {
  return async (name) => {
    const found = names[name];
    if (found === undefined) throw new LookupError("no such host");
    return (typeof found === "string" ? [found] : found).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

export interface Reply {
  readonly status: number;
  readonly statusMessage: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

function collect(res: IncomingMessage): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (chunk: Buffer) => chunks.push(chunk));
    res.on("end", () => resolve({ status: res.statusCode!, statusMessage: res.statusMessage!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    res.on("error", reject);
  });
}

/** A plain-HTTP request through the proxy (absolute URI, as pip and curl send it). */
export function viaProxy(socketPath: string, url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: url, method: options.method ?? "GET", headers: { host: new URL(url).host, ...options.headers }, agent: false }, (res) => collect(res).then(resolve, reject));
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Sends `text` on a new connection to the proxy and returns everything it answers until it closes. */
export async function rawExchange(socketPath: string, text: string | Buffer): Promise<string> {
  const socket = netConnect(socketPath);
  socket.write(text);
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.on("error", () => undefined);
  await once(socket, "close");
  return Buffer.concat(chunks).toString();
}

/** Sends CONNECT `authority` and reads the proxy's answer head; the socket is the tunnel when the status is 200. */
export async function connectThrough(socketPath: string, authority: string, headers: Record<string, string> = { host: authority }): Promise<{ statusLine: string; head: string; socket: Socket }> {
  const socket = netConnect(socketPath);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  socket.write(`CONNECT ${authority} HTTP/1.1\r\n${lines}\r\n`);
  let received = Buffer.alloc(0);
  for (;;) {
    const [chunk] = (await Promise.race([once(socket, "data"), once(socket, "close").then(() => [Buffer.alloc(0)])])) as [Buffer];
    if (chunk.length === 0) break;
    received = Buffer.concat([received, chunk]);
    if (received.includes("\r\n\r\n")) break;
  }
  const text = received.toString();
  const end = text.indexOf("\r\n\r\n");
  const head = end < 0 ? text : text.slice(0, end);
  const rest = end < 0 ? Buffer.alloc(0) : received.subarray(end + 4);
  if (rest.length > 0) socket.unshift(rest);
  return { statusLine: head.split("\r\n")[0]!, head: text, socket };
}

/** An HTTPS request through a CONNECT tunnel, the client checking the server against `ca`. */
export async function httpsViaProxy(socketPath: string, host: string, port: number, path: string, options: { ca: string; headers?: Record<string, string>; method?: string; body?: string }): Promise<Reply> {
  const { statusLine, socket } = await connectThrough(socketPath, `${host}:${port}`);
  if (!statusLine.includes(" 200 ")) {
    socket.destroy();
    throw new Error(`CONNECT refused: ${statusLine}`);
  }
  const secure = tlsConnect({ socket, servername: host, ca: options.ca });
  await once(secure, "secureConnect");
  return new Promise((resolve, reject) => {
    // HTTP over the TLS socket made above; no agent, so the socket given is the one used.
    const req = request(
      { path, method: options.method ?? "GET", headers: { host: `${host}:${port}`, ...options.headers }, createConnection: () => secure },
      (res) =>
        collect(res).then((reply) => {
          secure.destroy();
          socket.destroy();
          resolve(reply);
        }, reject),
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Header values of `name` (any case) in a raw header list. */
export function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let index = 0; index < rawHeaders.length; index += 2) if (rawHeaders[index]!.toLowerCase() === name.toLowerCase()) values.push(rawHeaders[index + 1]!);
  return values;
}

/** An HTTPS agent whose connections are CONNECT tunnels through the proxy, kept alive between requests as pip's pool keeps them. */
export class TunnelAgent extends HttpsAgent {
  constructor(
    private readonly socketPath: string,
    private readonly ca: string,
  ) {
    super({ keepAlive: true, maxSockets: 1 });
  }

  override createConnection(options: { host?: string | null; port?: number | null; servername?: string }, callback: (error: Error | null, socket?: Duplex) => void): undefined {
    // The request's host, not `servername`, which Node takes from a Host header the test may have forged.
    const host = options.host ?? "";
    connectThrough(this.socketPath, `${host}:${options.port}`).then(({ statusLine, socket }) => {
      if (!statusLine.includes(" 200 ")) return callback(new Error(`CONNECT refused: ${statusLine}`));
      const secure = tlsConnect({ socket, servername: host, ca: this.ca });
      secure.once("secureConnect", () => callback(null, secure));
      secure.once("error", (error) => callback(error));
    }, callback);
    return undefined;
  }
}

/** A GET or POST with `agent`, collected. */
export function requestWith(agent: HttpsAgent, url: string, options: { headers?: Record<string, string>; method?: string; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { agent, method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => collect(res).then(resolve, reject));
    req.on("error", reject);
    req.end(options.body);
  });
}
