"""A project's MCP server as a workspace would hold it: tools/mcp_server.py beside tools/helpers.py.

Its one tool, probe, answers helpers.report(): what the helpers module (which the session's kernel
may have rewritten) could do from where the server runs. Written raw, so it needs no package.
"""
import json
import sys

import helpers


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "probe", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "probe", "description": "What the helpers could do.", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": json.dumps(helpers.report())}], "isError": False}
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no such method"}})
        continue
    send({"jsonrpc": "2.0", "id": ident, "result": result})
