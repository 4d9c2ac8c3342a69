"""A hostile MCP server over stdio, written raw (the SDK would refuse to misbehave like this).

Usage: raw_server.py MODE. MODE decides how it starts:
  normal   answers initialize; its tools are below
  silent   never answers anything
  exit     writes to stderr and exits at once
  garbage  writes lines that are not JSON-RPC to stdout around every answer
  flood    writes many stderr lines before answering
  many     lists 10,000 tools
  exit_on_list  answers initialize, then writes to stderr and exits when asked for its tools
  odd_names     lists tools whose names hold full-width letters, a ligature or zero-width characters
Tools (normal, garbage, flood): ok, big (argument bytes), endless (writes argument bytes with no
newline, then waits), near (a notification of argument bytes as one line, the answer right behind it
in the same write), hang (never answers; a cancellation is
appended to $RECORD, as is the server's pid at start), fail (isError), secret (echoes $SECRET), change (adds tool "added" and sends
tools/list_changed), bad_schema, my-tool, has.dot, a 200-character name, pid.
"""
import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"
RECORD = os.environ.get("RECORD")
added = False


def send(message):
    if MODE == "garbage":
        sys.stdout.write("this is not json\n{\"also\": \"not a message\"}\n")
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def record(line):
    if RECORD:
        with open(RECORD, "a") as out:
            out.write(line + "\n")


def tool(name, schema=None, description="a test tool"):
    return {"name": name, "description": description, "inputSchema": schema or {"type": "object"}}


def tools():
    if MODE == "many":
        return [tool(f"t{i}") for i in range(10000)]
    if MODE == "odd_names":
        return [tool("ok"), tool("\uff53\uff45\uff41\uff52\uff43\uff48"), tool("read\u200bfile"), tool("\ufb01nd"), tool("ok\u200d"), tool("\u200b")]
    listed = [
        tool("ok", {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, "Says ok.\nSecond line."),
        tool("big", {"type": "object", "properties": {"bytes": {"type": "integer"}}}),
        tool("endless", {"type": "object", "properties": {"bytes": {"type": "integer"}}}),
        tool("near", {"type": "object", "properties": {"bytes": {"type": "integer"}}}),
        tool("hang"), tool("fail"), tool("secret"), tool("change"), tool("pid"),
        tool("bad_schema", {"type": "object", "properties": {"q": {"type": "not-a-type"}}}),
        tool("my-tool"), tool("has.dot"), tool("x" * 200),
    ]
    if added:
        listed.append(tool("added"))
    return listed


def text(value, is_error=False):
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


def call(request):
    global added
    name = request["params"]["name"]
    args = request["params"].get("arguments") or {}
    if name == "hang":
        record(f"call {request['id']}")
        return None
    if name == "big":
        return text("y" * int(args.get("bytes", 0)))
    if name == "endless":
        chunk = "y" * 65536
        for _ in range(int(args.get("bytes", 0)) // len(chunk)):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        sys.stdin.readline()
        return None
    if name == "near":
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": ""}}
        note["params"]["data"] = "y" * (int(args.get("bytes", 0)) - len(json.dumps(note)) - 1)
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": text("after the near one")}
        sys.stdout.write(json.dumps(note) + "\n" + json.dumps(answer) + "\n")
        sys.stdout.flush()
        return None
    if name == "fail":
        return text("it went wrong", True)
    if name == "secret":
        sys.stderr.write(f"my secret is {os.environ.get('SECRET')}\n")
        sys.stderr.flush()
        return text(f"the secret is {os.environ.get('SECRET')}")
    if name == "change":
        added = True
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("changed")
    if name == "pid":
        return text(str(os.getpid()))
    return text(f"ok {args.get('text', '')}")


KNOWN = {"initialize", "tools/list", "tools/call", "ping"}


def answer(request):
    method = request.get("method")
    if method == "initialize":
        return {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "raw", "version": "1"}}
    if method == "tools/list":
        if MODE == "exit_on_list":
            sys.stderr.write("raw server: gone while listing\n")
            sys.stderr.flush()
            os._exit(3)
        return {"tools": tools()}
    if method == "tools/call":
        return call(request)
    if method == "ping":
        return {}
    return None


def main():
    record(f"pid {os.getpid()}")
    if MODE == "exit":
        sys.stderr.write("raw server: cannot start, missing configuration\n")
        sys.exit(3)
    if MODE == "flood":
        for i in range(200000):
            sys.stderr.write(f"flood line {i} " + "z" * 50 + "\n")
        sys.stderr.flush()
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "notifications/cancelled":
            record(f"cancelled {message['params'].get('requestId')}")
            continue
        if MODE == "silent" or "id" not in message:
            continue
        if message.get("method") not in KNOWN:
            # A legacy server: the era probe (server/discover) is a method it does not know.
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}})
            continue
        result = answer(message)
        if result is not None:
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})


main()
