"""The `mcp` object: the tools of the MCP servers the session's settings configure, called from Python.

The servers run on the host and the runtime is their client; every call here is one JSON-RPC call to
the runtime (`mcp.call`), which checks the arguments against the tool's schema, applies the
server's deadline and allow/deny lists, and answers with the tool's result as data. Typed methods
(`mcp.<server>.<tool>(...)`) are made once per server from its tool list, at kernel start or, for a
server still starting then, the first time the code touches it; a tool a server gained later, and
every tool of a server a `/reload session` added, is called with `mcp.call("server.tool", {...})`.
"""

from __future__ import annotations

import base64
import inspect
import keyword
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._contract import (
    MCP_CALL,
    MCP_CALL_DOC,
    MCP_CALL_PARAMS,
    MCP_CATALOG,
    MCP_DESCRIBE,
    MCP_DESCRIBE_DOC,
    MCP_DESCRIBE_PARAMS,
    MCP_READ,
    MCP_READ_DOC,
    MCP_SERVERS,
    MCP_SERVERS_DOC,
    MCP_SERVERS_PARAMS,
    MCP_TOOLS,
    MCP_TOOLS_DOC,
    MCP_TOOLS_PARAMS,
    MCP_CATALOG_AT_LOAD_DEADLINE_S,
)
from ._display import WithoutAlbedoFrames
from ._errors import AlbedoError
from ._namespaces import declared, described
from ._transport import RpcChannel

RESERVED_NAMES = frozenset({"servers", "tools", "describe", "call", "read", "help"})
# JSON Schema's primitive types as the annotations a signature shows.
SCHEMA_TYPES: Dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


class McpToolError(AlbedoError):
    """A tool answered with `isError: true`: `server`, `tool` and the server's `text`."""

    def __init__(self, server: str, tool: str, text: str):
        super().__init__("mcp_tool_error", f"{server}.{tool} failed: {text}", {"server": server, "tool": tool})
        self.server = server
        self.tool = tool
        self.text = text


class McpNameError(WithoutAlbedoFrames, AttributeError):
    """`mcp.<name>` or `mcp.<server>.<name>` that names no server or tool method; the message says what to call instead."""


class McpArgumentError(WithoutAlbedoFrames, TypeError):
    """A typed tool method called with arguments its signature does not take."""


class McpImage:
    """An image a tool returned: `.mime`, `.data` (base64 text) and `.bytes`; notebooks show it as an image."""

    def __init__(self, mime: str, data: str):
        self.mime = mime
        self.data = data

    @property
    def bytes(self) -> bytes:
        return base64.b64decode(self.data)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Dict[str, Any]:
        return {self.mime: self.data, "text/plain": repr(self)}

    def __repr__(self) -> str:
        return f"<McpImage {self.mime}, {len(self.data) * 3 // 4} bytes>"


def progress_line(notice: Dict[str, Any]) -> Optional[str]:
    """The stderr line for a progress notification of a call (`mcp everything.sync: 3/10 · copying`),
    or for the status of the task it became (`mcp tools.build: compiling`), or None when it is malformed."""
    name, progress, total, message = notice.get("name"), notice.get("progress"), notice.get("total"), notice.get("message")
    if not isinstance(name, str):
        return None
    if progress is None and "progress" not in notice and isinstance(message, str) and message:
        return f"mcp {name}: {message}"
    if not isinstance(progress, (int, float)) or isinstance(progress, bool):
        return None
    done = f"{progress:g}/{total:g}" if isinstance(total, (int, float)) and not isinstance(total, bool) else f"{progress:g}"
    return f"mcp {name}: {done}{f' · {message}' if isinstance(message, str) and message else ''}"


def _content_of(answer: Any) -> Any:
    """A read's answer as the code sees it: the text (or bytes) of its one part, else a list of them."""
    if not isinstance(answer, dict):
        return answer
    parts: List[Any] = []
    for part in answer.get("contents") or []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif isinstance(part.get("data"), str):
            parts.append(base64.b64decode(part["data"]))
    return None if not parts else parts[0] if len(parts) == 1 else parts


def read_resource(channel: RpcChannel, uri: str, server: Optional[str] = None) -> Any:
    """Reads the resource `uri` (a link a tool returned) from `server`, or from the server that gave the link."""
    __tracebackhide__ = True  # noqa: F841
    params: Dict[str, Any] = {"uri": uri}
    if server is not None:
        params["server"] = server
    return _then(channel.call(MCP_READ, params), _content_of)


class McpLink:
    """A resource a tool linked to: `.uri`, `.name`, `.mime`, `.description`, `.server`; `await link.read()` reads it (as `mcp.read(uri)`)."""

    def __init__(self, channel: RpcChannel, data: Dict[str, Any]):
        self._channel = channel
        self.uri = str(data.get("uri"))
        self.server = str(data.get("server"))
        self.name: Optional[str] = data.get("name")
        self.mime: Optional[str] = data.get("mime")
        self.description: Optional[str] = data.get("description")

    def read(self) -> Any:
        __tracebackhide__ = True  # noqa: F841
        return read_resource(self._channel, self.uri, self.server)

    def __repr__(self) -> str:
        about = f" {self.name!r}" if self.name else ""
        return f"<McpLink{about} {self.uri} from {self.server}; await .read() reads it>"


def result_of(name: str, answer: Any, channel: Optional[RpcChannel] = None) -> Any:
    """A call's answer as the code sees it: the value, images as McpImage, links as McpLink, an error result raised as McpToolError."""
    if not isinstance(answer, dict):
        return answer
    server, _, tool = name.partition(".")
    if answer.get("is_error"):
        raise McpToolError(server, tool, str(answer.get("error_text") or answer.get("value") or "the tool reported an error"))
    value = answer.get("value")
    images: List[Any] = [McpImage(str(i.get("mime")), str(i.get("data"))) for i in answer.get("images") or [] if isinstance(i, dict)]
    links = [McpLink(channel, i) for i in answer.get("links") or [] if isinstance(i, dict)] if channel is not None else []
    extra = images + links
    if not extra:
        return value
    # A tool that returns only links has no text of its own beyond the links' JSON: the links stand for it.
    parts: List[Any] = [] if value is None or value == "" or (links and not images and _only_links(answer)) else (list(value) if isinstance(value, list) else [value])
    parts.extend(extra)
    return parts[0] if len(parts) == 1 else parts


def _only_links(answer: Dict[str, Any]) -> bool:
    """Whether the structured value is no more than the links again (the Python SDK wraps a list of links as {"result": [...]})."""
    value = answer.get("value")
    listed = value.get("result") if isinstance(value, dict) and set(value) == {"result"} else value
    return isinstance(listed, list) and len(listed) == len(answer.get("links") or []) and all(isinstance(item, dict) and item.get("type") == "resource_link" for item in listed)


def _then(answer: Any, shape: Callable[[Any], Any]) -> Any:
    """shape(answer), whether the call returned the answer or an awaitable of it."""
    if not inspect.isawaitable(answer):
        return shape(answer)

    async def wait() -> Any:
        __tracebackhide__ = True  # noqa: F841 (IPython hides frames that set it)
        return shape(await answer)

    return wait()


def _shaped(name: str, answer: Any, channel: Optional[RpcChannel] = None) -> Any:
    """result_of, whether the call returned the answer or an awaitable of it."""
    return _then(answer, lambda done: result_of(name, done, channel))


def _member(key: str) -> Callable[[Any], Any]:
    """A shape for `declared`: the answer's `key` (a list), whether the call returned the answer or an awaitable of it."""
    return lambda answer: _then(answer, lambda done: done.get(key) if isinstance(done, dict) else done)


def python_name(name: str) -> Optional[str]:
    """The attribute name for a server or tool name (`-` and `.` become `_`), or None when it cannot be one."""
    mangled = name.replace("-", "_")
    if not mangled.isidentifier() or keyword.iskeyword(mangled) or mangled.startswith("_"):
        return None
    return mangled


class McpServer:
    """One configured server: a typed method per tool, made once from its tool list."""

    def __init__(self, channel: RpcChannel, name: str, entry: Optional[Dict[str, Any]]):
        self._channel = channel
        self._name = name
        self._typed: List[str] = []
        self._minted = False
        if entry is not None and entry.get("status") == "running":
            self._mint(entry)

    def _mint(self, entry: Dict[str, Any]) -> None:
        self._minted = True
        candidates: Dict[str, List[Dict[str, Any]]] = {}
        for tool in entry.get("tools") or []:
            attribute = python_name(str(tool.get("tool", ""))) if isinstance(tool, dict) else None
            if attribute is not None and not hasattr(McpServer, attribute):
                candidates.setdefault(attribute, []).append(tool)
        for attribute, found in sorted(candidates.items()):
            if len(found) == 1:  # colliding names stay reachable through mcp.call only
                self.__dict__[attribute] = typed_tool(self._channel, self._name, attribute, found[0])
                self._typed.append(attribute)

    def _mint_late(self) -> None:
        # A server still starting when the kernel loaded: its tools are made on first use, once.
        self._minted = True
        try:
            catalog = self._channel.call_sync(MCP_CATALOG, {"server": self._name}, deadline=MCP_CATALOG_AT_LOAD_DEADLINE_S)
        except AlbedoError:
            self._minted = False
            return
        for entry in catalog.get("servers") or []:
            if isinstance(entry, dict) and entry.get("name") == self._name and entry.get("status") == "running":
                self._mint(entry)
                return
        self._minted = False

    def __getattr__(self, name: str) -> Any:
        # Only names lookup did not find reach here; private ones are IPython's and jedi's probes.
        if name.startswith("_"):
            raise AttributeError(name)
        if not self._minted:
            self._mint_late()
            if name in self.__dict__:
                return self.__dict__[name]
        typed = ", ".join(self._typed) or "none"
        raise McpNameError(
            f"mcp.{python_name(self._name) or self._name} has no tool method {name!r} (typed: {typed}); "
            f"`await mcp.tools({self._name!r})` lists its tools and `await mcp.call({self._name + '.' + name!r}, {{...}})` calls any of them"
        )

    def __dir__(self) -> List[str]:
        if not self._minted:
            self._mint_late()
        return sorted(set(super().__dir__()) | set(self._typed))

    def __repr__(self) -> str:
        if not self._minted:
            return f"<mcp server {self._name}: not running when the kernel started; its tools are made on first use>"
        return f"<mcp server {self._name}: {', '.join(self._typed) or 'no typed tools'}>"


class Mcp:
    """The session's MCP servers: servers(), tools(server), describe(name), call(name, arguments), read(uri), and one object per server."""

    def __init__(self, channel: RpcChannel):
        self._channel = channel
        self._servers: List[str] = []
        # Servers a reload added after the kernel started, by attribute name: they get no object.
        self._reloaded: Dict[str, str] = {}

    servers = declared(MCP_SERVERS, MCP_SERVERS_PARAMS, MCP_SERVERS_DOC, _member("servers"))
    tools = declared(MCP_TOOLS, MCP_TOOLS_PARAMS, MCP_TOOLS_DOC, _member("tools"))
    describe = declared(MCP_DESCRIBE, MCP_DESCRIBE_PARAMS, MCP_DESCRIBE_DOC)
    _call = declared(MCP_CALL, MCP_CALL_PARAMS, MCP_CALL_DOC)

    def call(self, name: str, arguments: Optional[Dict[str, Any]] = None) -> Any:
        __tracebackhide__ = True  # noqa: F841
        return _shaped(name, self._call(name, arguments or {}), self._channel)

    call.__doc__ = MCP_CALL_DOC

    def read(self, uri: Any, server: Optional[str] = None) -> Any:
        __tracebackhide__ = True  # noqa: F841
        if isinstance(uri, McpLink):
            return uri.read()
        return read_resource(self._channel, str(uri), server)

    read.__doc__ = MCP_READ_DOC

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        server = self._reloaded.get(name)
        if server is not None:
            raise McpNameError(
                f"mcp.{name}: the server {server} came with a `/reload session` after this kernel started, and typed methods "
                f"are made only when a kernel starts; call its tools with `await mcp.call({server + '.TOOL'!r}, {{...}})` "
                f"(`await mcp.tools({server!r})` lists them)"
            )
        listed = ", ".join(self._servers) or "none"
        raise McpNameError(f"no MCP server object mcp.{name} (servers: {listed}); `await mcp.servers()` lists what the session configures")

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._servers))

    def __repr__(self) -> str:
        methods = described(Mcp, "servers", "tools", "describe")
        later = f"; added by a reload, reached with call(): {', '.join(sorted(set(self._reloaded.values())))}" if self._reloaded else ""
        return f"<albedo mcp: {methods}, call(name, arguments), read(uri, server=None); servers: {', '.join(self._servers) or 'none'}{later}>"


def mint(mcp: Mcp, catalog: Any) -> List[str]:
    """Adds one McpServer per configured server of `catalog` to `mcp`; returns the attribute names."""
    entries = catalog.get("servers", []) if isinstance(catalog, dict) else []
    by_attribute: Dict[str, List[Dict[str, Any]]] = {}
    for entry in entries:
        attribute = python_name(str(entry.get("name", ""))) if isinstance(entry, dict) else None
        if attribute is not None and attribute not in RESERVED_NAMES and not hasattr(Mcp, attribute):
            by_attribute.setdefault(attribute, []).append(entry)
    for attribute, found in sorted(by_attribute.items()):
        if len(found) == 1:
            mcp.__dict__[attribute] = McpServer(mcp._channel, str(found[0]["name"]), found[0])
            mcp._servers.append(attribute)
    return list(mcp._servers)


def reloaded(mcp: Mcp, servers: List[str]) -> None:
    """Notes the servers a reload gave the session that `mcp` has no object for, so touching one says why and what to call."""
    for server in servers:
        attribute = python_name(server)
        if attribute is not None and attribute not in mcp._servers and attribute not in RESERVED_NAMES and not hasattr(Mcp, attribute):
            mcp._reloaded[attribute] = server


def _parameters(schema: Any) -> Optional[Tuple[List[inspect.Parameter], Dict[str, str]]]:
    """The signature an input schema gives (required first, optional keyword-only) and Python name -> property; None when a property cannot be a parameter."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return [], {}
    required = [name for name in schema.get("required") or [] if isinstance(name, str) and name in properties]
    optional = [name for name in properties if name not in required]
    parameters: List[inspect.Parameter] = []
    wire: Dict[str, str] = {}
    for name, kind in [(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in required] + [(n, inspect.Parameter.KEYWORD_ONLY) for n in optional]:
        python = python_name(name)
        if python is None or python in wire:
            return None
        wire[python] = name
        spec = properties.get(name) if isinstance(properties.get(name), dict) else {}
        annotation = SCHEMA_TYPES.get(spec.get("type"), inspect.Parameter.empty) if isinstance(spec.get("type"), str) else inspect.Parameter.empty
        default = inspect.Parameter.empty if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD else spec.get("default")
        parameters.append(inspect.Parameter(python, kind, default=default, annotation=annotation))
    return parameters, wire


def typed_tool(channel: RpcChannel, server: str, attribute: str, tool: Dict[str, Any]) -> Callable[..., Any]:
    """The method for one tool: its signature from the input schema, its docstring from the description."""
    qualified = f"{server}.{tool.get('tool')}"
    shaped_params = _parameters(tool.get("input_schema"))

    if shaped_params is None:
        # A property name Python cannot spell: the method takes the arguments as they are named.
        def loose(**arguments: Any) -> Any:
            __tracebackhide__ = True  # noqa: F841
            return _shaped(qualified, channel.call(MCP_CALL, {"name": qualified, "arguments": arguments}), channel)

        method = loose
    else:
        parameters, wire = shaped_params
        signature = inspect.Signature(parameters)

        def typed(*args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True  # noqa: F841
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                raise McpArgumentError(f"{typed.__qualname__}{signature}: {error}") from None
            # A keyword left at None is not sent: the server applies its own default.
            values = {wire[key]: value for key, value in bound.arguments.items() if value is not None}
            return _shaped(qualified, channel.call(MCP_CALL, {"name": qualified, "arguments": values}), channel)

        typed.__signature__ = signature  # type: ignore[attr-defined]
        method = typed
    method.__name__ = attribute
    method.__qualname__ = f"mcp.{python_name(server) or server}.{attribute}"
    method.__doc__ = _docstring(qualified, tool)
    return method


def _docstring(qualified: str, tool: Dict[str, Any]) -> str:
    lines = [str(tool.get("description") or "").strip() or qualified, ""]
    schema = tool.get("input_schema") if isinstance(tool.get("input_schema"), dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or [])
    if properties:
        lines.append("Arguments:")
        for name, spec in properties.items():
            spec = spec if isinstance(spec, dict) else {}
            need = "required" if name in required else "optional"
            kind = spec.get("type") if isinstance(spec.get("type"), str) else "any"
            lines.append(f"    {name} ({kind}, {need}): {str(spec.get('description') or '').strip()}")
        lines.append("")
    lines.append(f"Calls the MCP tool {qualified} on the host; await it in a notebook cell. mcp.describe({qualified!r}) shows its schemas.")
    return "\n".join(lines)
