"""Drives albedo's MCP server in the 2026-07-28 era with the official Python MCP SDK client (2.3),
with the Tasks extension (io.modelcontextprotocol/tasks) declared: a `resultType: "task"` answer is
followed with `tasks/get` until it ends; one task is cancelled with `tasks/cancel`.

usage: python era_client.py stdio NODE ALBEDO_BIN WORKSPACE
       python era_client.py http URL TOKEN
Prints one JSON object: the era, the tools, the handle's two calls, the unknown handle's answer,
the long cell's answer and the tasks seen, and the cancelled task with how long the next call took.
"""
import asyncio
import json
import os
import sys
import time
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from mcp import Client, StdioServerParameters
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp_types import CallToolResult, Request, Result

TASKS = "io.modelcontextprotocol/tasks"
SEEN: list[dict[str, Any]] = []


class TaskResult(Result):
    """A tools/call answered with a task."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None


class TaskRequest(Request[dict[str, Any], str]):
    name_param: ClassVar[str | None] = "taskId"


class AnyResult(Result):
    model_config = ConfigDict(extra="allow")


async def task_request(session, method: str, task_id: str) -> dict[str, Any]:
    answer = await session.send_request(TaskRequest(method=method, params={"taskId": task_id}), AnyResult)
    return answer.model_dump(by_alias=True, exclude_none=True)


class Tasks(ClientExtension):
    """The Tasks extension, client side: follows a task with tasks/get to its result."""

    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskResult, resolve=self.resolve)]

    async def resolve(self, task: TaskResult, ctx: ClaimContext) -> CallToolResult:
        SEEN.append({"taskId": task.task_id, "status": task.status})
        while True:
            await asyncio.sleep((task.poll_interval_ms or 500) / 1000)
            current = await task_request(ctx.session, "tasks/get", task.task_id)
            if current["status"] != "working":
                SEEN.append({"taskId": task.task_id, "status": current["status"]})
                return CallToolResult.model_validate(current["result"])


def texts(result: CallToolResult) -> list[str]:
    return [part.text for part in result.content if part.type == "text"]


def server():
    mode, *rest = sys.argv[1:]
    if mode == "stdio":
        node, albedo, workspace = rest
        return StdioServerParameters(command=node, args=[albedo, "mcp", "serve", "--workspace", workspace], env=dict(os.environ))
    url, token = rest
    return streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))


async def main() -> None:
    async with Client(server(), mode="2026-07-28", extensions=[Tasks()], read_timeout_seconds=120) as client:
        tools = await client.list_tools()
        first = await client.call_tool("python", {"code": "x = 1"})
        handle = first.structured_content["session"]
        second = await client.call_tool("python", {"code": "x + 1", "session": handle})
        unknown = await client.call_tool("python", {"code": "x", "session": "s-no-such-handle"})
        long = await client.call_tool("python", {"code": "import time; time.sleep(7); print('slept', x)", "session": handle})

        # A task cancelled by hand: the claimed shape itself, then tasks/cancel, then the next call.
        raw = await client.session.call_tool("python", {"code": "import time\ntry:\n    time.sleep(120)\nexcept KeyboardInterrupt:\n    stopped = True\n    raise", "session": handle}, allow_claimed=True)
        task_id = raw.task_id
        cancel = await task_request(client.session, "tasks/cancel", task_id)
        started = time.monotonic()
        after = await client.call_tool("python", {"code": "print(globals().get('stopped', False), x)", "session": handle})
        took = time.monotonic() - started
        final = await task_request(client.session, "tasks/get", task_id)
        print(json.dumps({
            "protocol": client.protocol_version,
            "tools": [tool.name for tool in tools.tools],
            "handle": handle,
            "first": texts(first),
            "second": texts(second),
            "second_session": second.structured_content["session"],
            "unknown": {"isError": unknown.is_error, "text": texts(unknown)},
            "long": texts(long),
            "seen": SEEN,
            "raw": {"resultType": raw.result_type, "status": raw.status},
            "cancel": cancel,
            "after": texts(after),
            "after_seconds": took,
            "final": {"status": final["status"]},
        }))


asyncio.run(main())
