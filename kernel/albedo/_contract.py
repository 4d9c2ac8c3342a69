# Generated from the TypeScript runtime by `npm run contract` (src/cli/pythonContract.ts); do not edit.
"""What the kernel package shares with the runtime (K-4): the bridge's variables, defaults and bounds,
the methods with their parameters, and the JSON-RPC error table with its exception classes."""

from inspect import Parameter

from ._errors import AlbedoError, ProtocolError

# The kernel bridge's environment variables (src/bridge/contract.ts).
ENDPOINT_ENV = "ALBEDO_RPC_ENDPOINT"
TOKEN_ENV = "ALBEDO_RPC_TOKEN"
DEADLINE_MS_ENV = "ALBEDO_RPC_DEADLINE_MS"
MAX_MESSAGE_BYTES_ENV = "ALBEDO_RPC_MAX_MESSAGE_BYTES"
EXTENSIONS_ENV = "ALBEDO_EXTENSIONS"
# Each variable by its member in the daemon's JSON (the `rpc` answer to a notebook kernel, K-13).
BRIDGE_ENV = {
    "endpoint": ENDPOINT_ENV,
    "token": TOKEN_ENV,
    "deadline_ms": DEADLINE_MS_ENV,
    "max_message_bytes": MAX_MESSAGE_BYTES_ENV,
    "extensions": EXTENSIONS_ENV,
}
EXTENSIONS_SEPARATOR = ","
EXTENSION_NAMES = ("python", "skills", "mcp")

# Used when a variable is unset: the values a session's kernel is given.
DEFAULT_DEADLINE_MS = 65000
MAX_MESSAGE_BYTES = 1048576
# Calls the runtime lets one session have in flight; a socket holds back its calls beyond it.
MAX_PENDING_CALLS = 256
# The socket a session's kernel binds beside the endpoint for its main loop; the runtime dials it.
KERNEL_SOCKET_NAME = "rpc-kernel"
# UTF-8 bytes of text one stream message carries; the metadata member counting what was left out.
STREAM_TEXT_BYTES = 2031616
DROPPED_BYTES_METADATA = "albedo_dropped_bytes"

# The methods a session serves (K-5): for each its name, its parameters in order with their
# defaults (REQUIRED: none; None: optional, left out of the call), its summary; then the notifications.
REQUIRED = Parameter.empty
SKILLS_LIST = "skills.list"
SKILLS_LIST_PARAMS = ()
SKILLS_LIST_DOC = "The catalog entries of the session's snapshot: name, description, source and slash command of each skill."
SKILLS_READ = "skills.read"
SKILLS_READ_PARAMS = (("name", REQUIRED), ("resource", "SKILL.md"), ("offset", 0), ("limit", 16384))
SKILLS_READ_DOC = "One byte range of a skill's resource: {content, encoding, size, offset, next_offset, truncated}."
SKILLS_RESOURCES = "skills.resources"
SKILLS_RESOURCES_PARAMS = (("name", REQUIRED),)
SKILLS_RESOURCES_DOC = "The relative paths of a skill's resources, with the diagnostics of the walk."
COMMANDS_CATALOG = "commands.catalog"
COMMANDS_CATALOG_PARAMS = ()
COMMANDS_CATALOG_DOC = "Every command of the current snapshot with its argument details."
COMMANDS_INVOKE = "commands.invoke"
COMMANDS_INVOKE_PARAMS = (("name", REQUIRED), ("arguments", ""))
COMMANDS_INVOKE_DOC = "Runs a command by slash name with raw argument text or a dict of named arguments; a skill's activation comes back as an Activation (a dict)."
COMMANDS_SLASH = "commands.slash"
COMMANDS_SLASH_PARAMS = (("line", REQUIRED),)
COMMANDS_SLASH_DOC = "Runs one slash line as a person typed it and answers with the text to show."
COMMANDS_COMPLETE = "commands.complete"
COMMANDS_COMPLETE_PARAMS = (("line", REQUIRED),)
COMMANDS_COMPLETE_DOC = "The completions of a partly typed slash line."
MCP_SERVERS = "mcp.servers"
MCP_SERVERS_PARAMS = ()
MCP_SERVERS_DOC = "The session's MCP servers: name, status, tool count and diagnostics of each."
MCP_TOOLS = "mcp.tools"
MCP_TOOLS_PARAMS = (("server", None),)
MCP_TOOLS_DOC = "The tools of every running server, or of one: qualified name server.tool and a one-line description."
MCP_DESCRIBE = "mcp.describe"
MCP_DESCRIBE_PARAMS = (("name", REQUIRED),)
MCP_DESCRIBE_DOC = "One tool's description and its input and output JSON schemas, by qualified name server.tool."
MCP_CALL = "mcp.call"
MCP_CALL_PARAMS = (("name", REQUIRED), ("arguments", None))
MCP_CALL_DOC = "Calls a tool by qualified name with a dict of arguments, checked against its input schema; the result is the tool's structured content, else its text, with its images."
MCP_READ = "mcp.read"
MCP_READ_PARAMS = (("uri", REQUIRED), ("server", None))
MCP_READ_DOC = "Reads a resource a tool linked to, by its uri, from the server whose tool gave the link (or the one named); the answer is bounded like a call's."
MCP_CATALOG = "mcp.catalog"
MCP_CATALOG_PARAMS = (("server", None),)
MCP_CATALOG_DOC = "Every configured server (or one) with the input schemas of its tools, for the kernel's typed methods."
# How long the kernel, as it loads, waits for mcp.catalog: the runtime's wait for servers still starting, and a margin.
MCP_CATALOG_AT_LOAD_DEADLINE_S = 10
CANCEL_METHOD = "albedo/cancel"
HELLO_METHOD = "albedo/hello"
# After a reload that added MCP servers: {servers, deadline_ms}; the kernel gains `mcp` if it had none.
MCP_RELOADED_METHOD = "albedo/mcp"
# While a cell's mcp.call runs: {cell, name, progress, total?, message?}, shown as a line on the cell's stderr.
MCP_PROGRESS_METHOD = "albedo/mcp_progress"
# The notebook launcher (K-13): where it finds the daemon, how it asks it for a session, and its waits.
STATE_DIR_ENV = "ALBEDO_HOME"
STATE_DIR_NAME = ".albedo"
DAEMON_INFO_FILE = "daemon.json"
DAEMON_TOKEN_FILE = "daemon.token"
DAEMON_LOG_FILE = "daemon.log"
MAX_STATE_FILE_BYTES = 4096
HEALTH_PATH = "/health"
SESSIONS_PATH = "/sessions"
# The `client` a notebook's kernel opens its session as, so lists of sessions say whose it is.
NOTEBOOK_CLIENT = "notebook"
HEALTH_TIMEOUT_S = 2
DAEMON_START_DEADLINE_S = 30
INSTALL_ENV = "ALBEDO_INSTALL"
NODE_ENV = "ALBEDO_NODE"
# A notebook's workspace: the nearest directory from the notebook's up holding a marker (at most
# MAX_WORKSPACE_WALK directories, never the home or the root), unless WORKSPACE_ENV pins it.
WORKSPACE_ENV = "ALBEDO_WORKSPACE"
WORKSPACE_MARKERS = (".albedo", ".agents", ".git")
MAX_WORKSPACE_WALK = 64
# The global settings file, read by a launcher that reaches no daemon for its `sandbox` mode (K-14), and its bound.
SETTINGS_FILE = "settings.json"
MAX_SETTINGS_BYTES = 262144
# Remote kernels (K-12): the comm the runtime opens, how a blocking call asks for its reply on the
# comm's subshell, and the oldest ipykernel that serves comm messages while a cell awaits.
COMM_TARGET = "albedo.rpc"
REPLY_MEMBER = "reply"
REPLY_SUBSHELL = "subshell"
MIN_IPYKERNEL_VERSION = "7.4.0"
# Durable kernel state (K-15): the checkpoint directory's variable, the restore switch, its files and bounds.
CHECKPOINT_DIR_ENV = "ALBEDO_CHECKPOINT_DIR"
CHECKPOINT_RESTORE_ENV = "ALBEDO_CHECKPOINT_RESTORE"
CHECKPOINT_MANIFEST_FILE = "manifest.json"
CHECKPOINT_VALUES_DIR = "values"
CHECKPOINT_REPORT_FILE = "restored.json"
MAX_CHECKPOINT_NAME_BYTES = 67108864
MAX_CHECKPOINT_BYTES = 268435456
MAX_CHECKPOINT_NAMES = 4096
MAX_CHECKPOINT_MANIFEST_BYTES = 4194304
MAX_CHECKPOINT_REASON_CHARS = 200


class ReloadRequired(AlbedoError):
    """Error code reload_required, JSON-RPC -32001."""


class NotFound(AlbedoError):
    """Error code not_found, JSON-RPC -32002."""


class InvalidParams(AlbedoError):
    """Error code invalid_params, JSON-RPC -32003."""


class LimitExceeded(AlbedoError):
    """Error code limit_exceeded, JSON-RPC -32004."""


class Forbidden(AlbedoError):
    """Error code forbidden, JSON-RPC -32005."""


class Cancelled(AlbedoError):
    """Error code cancelled, JSON-RPC -32006."""


class RpcTimeout(AlbedoError):
    """Error code timeout, JSON-RPC -32007."""


class KernelDied(AlbedoError):
    """Error code kernel_died, JSON-RPC -32008."""


class Conflict(AlbedoError):
    """Error code conflict, JSON-RPC -32009."""


# JSON-RPC error number -> (code, exception class).
ERRORS = {
    -32001: ("reload_required", ReloadRequired),
    -32002: ("not_found", NotFound),
    -32003: ("invalid_params", InvalidParams),
    -32004: ("limit_exceeded", LimitExceeded),
    -32005: ("forbidden", Forbidden),
    -32006: ("cancelled", Cancelled),
    -32007: ("timeout", RpcTimeout),
    -32008: ("kernel_died", KernelDied),
    -32009: ("conflict", Conflict),
    -32700: ("parse_error", ProtocolError),
    -32600: ("invalid_request", ProtocolError),
    -32601: ("method_not_found", NotFound),
    -32602: ("invalid_params", InvalidParams),
    -32603: ("internal_error", ProtocolError),
}
