"""Drives albedo's MCP server with the official Python MCP SDK client, as Python agents do: over
stdio (`albedo mcp serve`) or over Streamable HTTP (the daemon's /mcp).

usage: python python_client.py stdio NODE ALBEDO_BIN WORKSPACE
       python python_client.py http URL TOKEN
Prints one JSON object: the tool names, a cell's text, the image parts' MIME types, a prompt's
first message and a resource's text.
"""
import asyncio
import contextlib
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEklEQVR4nGP4z8CAFWEXHbQSACj/P8Fu7N9hAAAAAElFTkSuQmCC"


@contextlib.asynccontextmanager
async def connected():
    """The (read, write) streams of the transport the command line names."""
    mode, *rest = sys.argv[1:]
    if mode == "stdio":
        node, albedo, workspace = rest
        params = StdioServerParameters(command=node, args=[albedo, "mcp", "serve", "--workspace", workspace], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            yield read, write
    elif mode == "http":
        url, token = rest
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                yield streams[0], streams[1]
    else:
        raise SystemExit(f"unknown mode {mode}")


async def main() -> None:
    async with connected() as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            first = await session.call_tool("python", {"code": "value = 6 * 7\nprint(value)"})
            shown = await session.call_tool(
                "python",
                {"code": f"from IPython.display import Image, display\nimport base64\ndisplay(Image(data=base64.b64decode('{PNG}')))\nprint(value + 1)"},
            )
            prompt = await session.get_prompt("demo", {"arguments": "from python"})
            resource = await session.read_resource("skill://demo/SKILL.md")
            print(json.dumps({
                "tools": [tool.name for tool in tools.tools],
                "first": [part.text for part in first.content if part.type == "text"],
                "second": [part.text for part in shown.content if part.type == "text"],
                "images": [part.mime_type for part in shown.content if part.type == "image"],
                "prompt": prompt.messages[0].content.text,
                "resource": resource.contents[0].text,
            }))


asyncio.run(main())
