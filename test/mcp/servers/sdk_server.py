"""An MCP server written with the official Python SDK (stdio), for tests from a real kernel.

Tools: shout(text, times=1) and nap(seconds), which appends "cancelled" to $RECORD when the
client cancels it (and "napping" when it starts).
"""
import asyncio
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-test")


@server.tool()
def shout(text: str, times: int = 1) -> str:
    """Shouts the text back, `times` times."""
    return " ".join([text.upper()] * times)


@server.tool()
async def nap(seconds: float) -> str:
    """Sleeps for `seconds`; its start and a cancellation are recorded."""
    with open(os.environ["RECORD"], "a") as record:
        record.write("napping\n")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        with open(os.environ["RECORD"], "a") as record:
            record.write("cancelled\n")
        raise
    return "rested"


server.run("stdio")
