// The Node reference server (mcp-server-everything) over Streamable HTTP on loopback: its own
// HTTP entry point listens on every interface, so the test serves its createServer() here.
// Prints the port on stdout once listening; one MCP session per initialize.
import { randomUUID } from "node:crypto";
import { createServer as createHttpServer } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";

const sessions = new Map();

const http = createHttpServer(async (req, res) => {
  const id = req.headers["mcp-session-id"];
  let transport = typeof id === "string" ? sessions.get(id) : undefined;
  if (transport === undefined) {
    if (id !== undefined || req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    const { server } = createServer();
    transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => sessions.set(sid, transport) });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await server.connect(transport);
  }
  await transport.handleRequest(req, res);
});

http.listen(0, "127.0.0.1", () => process.stdout.write(`${http.address().port}\n`));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
