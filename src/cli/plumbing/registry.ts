/**
 * Every subcommand, declared light: the words that name it, its summary and usage line, and how to
 * load it. The overview, a group's help, `albedo help` and did-you-mean read these alone; a
 * command's module (its options and code, with the SDKs, the daemon or the kernel they pull in) is
 * imported only when that command runs, prints its own --help, or `albedo completion` lists its
 * options. So `albedo --version` or `albedo skills list` loads nothing it does not use.
 */
import type { DeclaredCommand } from "./command.js";
import { SETTABLE_KEYS } from "../commands/settingKeys.js";
import { MCP_CLIENTS } from "../commands/mcpClients.js";


/** Every subcommand, in the order `albedo --help` lists them. */
export const COMMANDS: readonly DeclaredCommand[] = [
  {
    path: ["skills", "list"],
    summary: "list the skills this workspace's catalog holds: scope, on or off and which settings scope decided, diagnostics",
    usage: "",
    load: async () => (await import("../commands/skills.js")).skillsList,
  },
  {
    path: ["skills", "validate"],
    summary: "validate skill directories (or SKILL.md files) against the Agent Skills rules; exit 1 if any is invalid",
    usage: "PATH...",
    load: async () => (await import("../commands/skills.js")).skillsValidate,
  },
  {
    path: ["skills", "prompt"],
    summary: "print the skill catalog block exactly as a model receives it (skills turned off in settings left out)",
    usage: "",
    load: async () => (await import("../commands/skills.js")).skillsPrompt,
  },
  {
    path: ["skills", "read"],
    summary: "print one byte range of a skill's SKILL.md or another resource",
    usage: "NAME [RESOURCE]",
    load: async () => (await import("../commands/skillsAccess.js")).skillsRead,
  },
  {
    path: ["skills", "resources"],
    summary: "list the resource files of a skill without reading them",
    usage: "NAME",
    load: async () => (await import("../commands/skillsAccess.js")).skillsResources,
  },
  {
    path: ["skills", "on"],
    summary: "turn skills on in the global (or --project) settings, through the daemon",
    usage: "NAME...",
    load: async () => (await import("../commands/settingsCommands.js")).skillsOn,
  },
  {
    path: ["skills", "off"],
    summary: "turn skills off in the global (or --project) settings, through the daemon",
    usage: "NAME...",
    load: async () => (await import("../commands/settingsCommands.js")).skillsOff,
  },
  {
    path: ["skills", "clear"],
    summary: "drop skills from a scope's on and off lists, so a wider scope (or the default) decides",
    usage: "NAME...",
    load: async () => (await import("../commands/settingsCommands.js")).skillsClear,
  },
  {
    path: ["settings", "get"],
    summary: "print the settings (or one KEY) of the global and project scopes, as the daemon reads them",
    usage: "[KEY]",
    load: async () => (await import("../commands/settingsCommands.js")).settingsGet,
  },
  {
    path: ["settings", "set"],
    summary: `set one KEY in the global (or --project) settings through the daemon: ${SETTABLE_KEYS.map((k) => k.key).filter((k) => !k.startsWith("limits.")).join(", ")}, limits.*`,
    usage: "KEY VALUE",
    load: async () => (await import("../commands/settingsCommands.js")).settingsSet,
  },
  {
    path: ["settings", "unset"],
    summary: "remove one KEY (or a whole section) from the global (or --project) settings through the daemon, so a wider scope or the default decides",
    usage: "KEY",
    load: async () => (await import("../commands/settingsCommands.js")).settingsUnset,
  },
  {
    path: ["mcp", "list"],
    summary: "list the MCP servers of the global and project settings and whether a session here would start each",
    usage: "",
    load: async () => (await import("../commands/mcpCommands.js")).mcpList,
  },
  {
    path: ["mcp", "add"],
    summary: "add an MCP server to the global (or --project) settings through the daemon: a command after --, or --url",
    usage: "NAME [-- COMMAND ARGS...]",
    load: async () => (await import("../commands/mcpCommands.js")).mcpAdd,
  },
  {
    path: ["mcp", "remove"],
    summary: "remove an MCP server from the global (or --project) settings through the daemon",
    usage: "NAME",
    load: async () => (await import("../commands/mcpCommands.js")).mcpRemove,
  },
  {
    path: ["mcp", "approve"],
    summary: "let a server from this workspace's project settings start: approves that exact entry (a changed entry needs a new approval)",
    usage: "NAME",
    load: async () => (await import("../commands/mcpCommands.js")).mcpApprove,
  },
  {
    path: ["mcp", "prompt"],
    summary: "start the configured MCP servers once and print the <mcp_servers> block exactly as a model receives it",
    usage: "",
    load: async () => (await import("../commands/mcpCommands.js")).mcpPrompt,
  },
  {
    path: ["mcp", "serve"],
    summary: "serve this workspace's sandboxed Python kernel and skills to an MCP client over stdio (tools python, skill, reload; skills as prompts and resources)",
    usage: "",
    load: async () => (await import("../commands/mcpServe.js")).mcpServe,
  },
  {
    path: ["mcp", "config"],
    summary: `print the entry that makes an MCP client start albedo on this workspace: ${MCP_CLIENTS.join(", ")} (where it goes on stderr)`,
    usage: "CLIENT",
    load: async () => (await import("../commands/mcpServe.js")).mcpConfig,
  },
  {
    path: ["exec"],
    summary: "run Python in a session kernel with skills and commands in scope; exit 1 on a Python error, N on sys.exit(N)",
    usage: "(FILE | - | -c CODE)",
    load: async () => (await import("../commands/exec.js")).execCommand,
  },
  {
    path: ["chat"],
    summary: "talk to the model the `model` settings name: one MESSAGE (a turn, rows printed) or an interactive chat",
    usage: "[MESSAGE]",
    load: async () => (await import("../terminal/chat.js")).chatCommand,
  },
  {
    path: ["console"],
    summary: "interactive console on a session: Python cells, slash commands with completion, /reload session; input history kept in the state dir",
    usage: "",
    load: async () => (await import("../terminal/console.js")).consoleCommand,
  },
  {
    path: ["web"],
    summary: "open the web console (chat, cells, plots, skill switches) in a browser, starting a daemon if none runs",
    usage: "",
    load: async () => (await import("../commands/web.js")).webCommand,
  },
  {
    path: ["serve"],
    summary: "run the daemon: HTTP + WebSocket API on loopback or a Unix socket (token in $ALBEDO_HOME/daemon.token)",
    usage: "",
    load: async () => (await import("../commands/serve.js")).serveCommand,
  },
  {
    path: ["daemon", "status"],
    summary: "say whether a daemon runs for the state dir: pid, URL, sessions, spare kernels, uptime; exit 1 when none",
    usage: "",
    load: async () => (await import("../commands/daemonCommands.js")).daemonStatus,
  },
  {
    path: ["daemon", "stop"],
    summary: "stop the daemon for the state dir: its sessions close, each kernel through its shutdown ladder",
    usage: "",
    load: async () => (await import("../commands/daemonCommands.js")).daemonStop,
  },
  {
    path: ["network", "show"],
    summary: "what a sandboxed kernel may reach: the global network setting, or a running session's policy and connections (--session ID)",
    usage: "",
    load: async () => (await import("../commands/network.js")).networkShow,
  },
  {
    path: ["network", "allow"],
    summary: "let kernels reach PATTERNs (host, *.domain, IP, each with :PORT): the global setting, or a running session's next connection (--session ID)",
    usage: "PATTERN...",
    load: async () => (await import("../commands/network.js")).networkAllow,
  },
  {
    path: ["network", "deny"],
    summary: "refuse PATTERNs even when allowed: the global setting, or a running session's next connection (--session ID)",
    usage: "PATTERN...",
    load: async () => (await import("../commands/network.js")).networkDeny,
  },
  {
    path: ["network", "reset"],
    summary: "network off in the global setting, or a running session back to the setting it opened with (--session ID)",
    usage: "",
    load: async () => (await import("../commands/network.js")).networkReset,
  },
  {
    path: ["network", "presets"],
    summary: "list the presets shipped in the install and the hosts each allows",
    usage: "",
    load: async () => (await import("../commands/network.js")).networkPresets,
  },
  {
    path: ["sessions"],
    summary: "list the daemon's sessions: id, who opened it (console, chat, web, notebook, mcp, api), kernel status, age, workspace; --resumable the closed ones a resume starts from",
    usage: "",
    load: async () => (await import("../commands/sessions.js")).sessionsCommand,
  },
  {
    path: ["restart"],
    summary: "restart a daemon session's kernel: empty, or with --restore loading its checkpoint so its variables come back",
    usage: "ID",
    load: async () => (await import("../commands/restart.js")).restartCommand,
  },
  {
    path: ["setup"],
    summary: "create the managed Python environment (a venv with ipykernel and pyzmq) that kernels run in, with any packages asked for",
    usage: "",
    load: async () => (await import("../commands/setup.js")).setupCommand,
  },
  {
    path: ["packages", "clear"],
    summary: "empty this workspace's package layer: what `%pip install` in its sandboxed cells installed (kept in the state dir)",
    usage: "",
    load: async () => (await import("../commands/packages.js")).packagesClear,
  },
  {
    path: ["doctor"],
    summary: "check Node, Python, ipykernel, the extra packages, kernelspecs (and that the albedo one runs this install), the state dir, bubblewrap, the daemon and each configured MCP server (started once), each with a fix",
    usage: "",
    load: async () => (await import("../commands/doctor.js")).doctorCommand,
  },
  {
    path: ["kernelspec", "install"],
    summary: 'register the "albedo (Python)" Jupyter kernelspec: notebooks on it get skills and commands from the albedo daemon',
    usage: "",
    load: async () => (await import("../commands/kernelspec.js")).kernelspecInstall,
  },
  {
    path: ["kernelspec", "list"],
    summary: "list the Jupyter kernelspecs on the search path, and any that are malformed",
    usage: "",
    load: async () => (await import("../commands/kernelspec.js")).kernelspecList,
  },

  {
    path: ["completion"],
    summary: "print a shell completion script: source <(albedo completion bash), or zsh",
    usage: "bash|zsh",
    load: async () => (await import("./completion.js")).completionCommand(() => COMMANDS),
  },
];
