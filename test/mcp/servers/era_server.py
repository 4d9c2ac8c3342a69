"""An MCP server written with the official Python SDK (stdio), serving one protocol era or both.

Usage: era_server.py ERA, where ERA is
  modern  the 2026-07-28 era only (an `initialize` is refused)
  legacy  the handshake era only (server/discover is a method it does not know)
  both    whichever the client opens with (the SDK's default)
  http    both eras over Streamable HTTP on 127.0.0.1:PORT (the next argument), path /mcp
Tools: shout(text); link() returns a resource_link to notes://today (a readable resource);
grow() adds the tool "grown" and tells the client its list changed; slow(seconds), which, for a
client that declares the Tasks extension, answers at once with a task (the extension's tasks/get
and tasks/cancel are served; a cancel is appended to $RECORD). Every request's method is
appended to $RECORD too, with its era, when RECORD is set.
"""
import asyncio
import datetime
import os
import secrets
import sys
from typing import Any

import anyio
from pydantic import BaseModel

from mcp.server.extension import Extension, MethodBinding
from mcp.types import ResourceLink
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.runner import _serve_modern_stream, serve_loop
from mcp.server.stdio import stdio_server

ERA = sys.argv[1] if len(sys.argv) > 1 else "both"
RECORD = os.environ.get("RECORD")
TASKS = "io.modelcontextprotocol/tasks"


def record(line: str) -> None:
    if RECORD:
        with open(RECORD, "a") as out:
            out.write(line + "\n")


class TaskParams(BaseModel):
    taskId: str


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


class Tasks(Extension):
    """The Tasks extension for the tool `slow`: a task per call from a client that declares it."""

    identifier = TASKS

    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}
        self.work: dict[str, asyncio.Task[Any]] = {}

    def methods(self):
        return [MethodBinding("tasks/get", TaskParams, self.get), MethodBinding("tasks/cancel", TaskParams, self.cancel)]

    def view(self, task_id: str) -> dict[str, Any]:
        task = self.tasks.get(task_id)
        if task is None:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32602, message="Failed to retrieve task: Task not found")
        return dict(task)

    async def get(self, ctx, params: TaskParams):
        record(f"tasks/get {params.taskId}")
        return self.view(params.taskId)

    async def cancel(self, ctx, params: TaskParams):
        record(f"tasks/cancel {params.taskId}")
        work = self.work.get(params.taskId)
        if work is not None:
            work.cancel()
        return {}

    async def intercept_tool_call(self, params, ctx, call_next):
        capabilities = ctx.session.client_capabilities
        extensions = getattr(capabilities, "extensions", None) or {}
        if params.name != "slow" or TASKS not in extensions:
            return await call_next(ctx)
        seconds = float((params.arguments or {}).get("seconds", 1))
        task_id = secrets.token_hex(16)
        stamp = now()
        self.tasks[task_id] = {"taskId": task_id, "status": "working", "statusMessage": "napping", "createdAt": stamp, "lastUpdatedAt": stamp, "ttlMs": 600000, "pollIntervalMs": 100}

        async def run() -> None:
            try:
                await asyncio.sleep(seconds)
                self.tasks[task_id].update(status="completed", statusMessage="rested", lastUpdatedAt=now(), result={"content": [{"type": "text", "text": f"rested {seconds}s as a task"}], "isError": False})
            except asyncio.CancelledError:
                self.tasks[task_id].update(status="cancelled", statusMessage="cancelled by the client", lastUpdatedAt=now())

        self.work[task_id] = asyncio.get_running_loop().create_task(run())
        record(f"task {task_id}")
        return {"resultType": "task", **self.tasks[task_id]}


server = MCPServer("era-test", extensions=[Tasks()])
grown = False


@server.tool()
def shout(text: str, ctx: Context) -> str:
    """Shouts the text back."""
    record(f"shout {ctx.request_context.protocol_version}")
    return text.upper()


@server.tool()
def link() -> list[ResourceLink]:
    """Returns a link to today's notes."""
    return [ResourceLink(type="resource_link", uri="notes://today", name="today", mimeType="text/plain", description="Today's notes")]


@server.resource("notes://today", mime_type="text/plain")
def today() -> str:
    return "buy milk"


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps for `seconds` (a task, for a client that declares the Tasks extension)."""
    await asyncio.sleep(seconds)
    return f"rested {seconds}s"


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `grown` and says the list changed."""
    global grown
    if not grown:
        grown = True
        server.add_tool(lambda: "grown", name="grown", description="Added by grow.")
    if ctx.request_context.protocol_version >= "2026":
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    return "grew"


async def main() -> None:
    lowlevel = server._lowlevel_server
    if ERA == "http":
        await server.run_streamable_http_async(host="127.0.0.1", port=int(sys.argv[2]))
        return
    async with stdio_server() as (read_stream, write_stream):
        async with lowlevel.lifespan(lowlevel) as state:
            if ERA == "modern":
                await _serve_modern_stream(lowlevel, read_stream, write_stream, lifespan_state=state, raise_exceptions=False)
            elif ERA == "legacy":
                await serve_loop(lowlevel, read_stream, write_stream, lifespan_state=state, init_options=lowlevel.create_initialization_options())
            else:
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


anyio.run(main)
