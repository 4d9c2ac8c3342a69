/**
 * What the CLI says about itself: the overview, one command's help, a group's help, the one usage
 * line a usage error shows, and the topics of `albedo help TOPIC`. Every row fits TERMINAL_COLUMNS.
 */
import { hangingRow, TERMINAL_COLUMNS, wrap } from "../../text/index.js";
import { settingsKeys } from "../../settings/index.js";
import type { OptionSpec } from "./args.js";
import type { DeclaredCommand } from "./command.js";

export const HELP_OPTION: OptionSpec = { name: "help", short: "h", help: "show this help" };
/** Width of the left column in help rows (command or option), indent included. */
const LEFT_COLUMN = 32;

/** "albedo skills read NAME [RESOURCE] [options]". */
export function usageLine(command: DeclaredCommand): string {
  return `usage: albedo ${command.path.join(" ")}${command.usage ? ` ${command.usage}` : ""} [options]`;
}

function commandRows(commands: readonly DeclaredCommand[]): string[] {
  return commands.flatMap((c) => hangingRow(`  ${`${c.path.join(" ")} ${c.usage}`.trim()}  `, c.summary, LEFT_COLUMN, TERMINAL_COLUMNS));
}

/** `albedo --help`: every command, one wrapped row each. */
export function overview(commands: readonly DeclaredCommand[]): string {
  return [
    "usage: albedo <command> [options]",
    "",
    ...wrap("Agent Skills in a Python kernel: an interactive console, one-shot runs, and a daemon for notebooks. Without a command, on a terminal, albedo opens the console.", TERMINAL_COLUMNS),
    "",
    "commands:",
    ...commandRows(commands),
    "",
    ...wrap(`Run \`albedo <command> --help\` for a command's options, \`albedo --version\` for the version, and \`albedo help TOPIC\` for a topic: ${Object.keys(TOPICS).join(", ")}.`, TERMINAL_COLUMNS),
    "",
  ].join("\n");
}

/** `albedo <command> --help`: the declaration's usage and summary, then the options its module declares. */
export function commandHelp(command: DeclaredCommand, options: readonly OptionSpec[]): string {
  const lines = [usageLine(command), "", ...wrap(command.summary, TERMINAL_COLUMNS), "", "options:"];
  for (const spec of [...options, HELP_OPTION]) {
    const flag = `${spec.short ? `-${spec.short}, ` : ""}--${spec.name}${spec.value ? ` ${spec.value}` : ""}`;
    lines.push(...hangingRow(`  ${flag}  `, spec.help, LEFT_COLUMN, TERMINAL_COLUMNS));
  }
  return `${lines.join("\n")}\n`;
}

/** `albedo skills --help`: the commands of one group. */
export function groupHelp(group: string, commands: readonly DeclaredCommand[]): string {
  return [`usage: albedo ${group} <command> [options]`, "", ...commandRows(commands), "", `Run \`albedo ${group} <command> --help\` for a command's options.`, ""].join("\n");
}

/** The variables albedo reads, as `albedo help environment` lists them (the docs name no other). */
export const ENVIRONMENT: readonly (readonly [string, string])[] = [
  ["ALBEDO_HOME", "the state dir: settings, sessions, the daemon's token and log, images (default ~/.albedo)"],
  ["ALBEDO_PYTHON", "the Python interpreter kernels run in (default: the kernel.python setting, else the managed venv)"],
  ["ALBEDO_WORKSPACE", "a notebook's workspace, pinned (default: the nearest folder up holding .albedo, .agents or .git); albedo sets it for an MCP server it starts: the workspace the server serves"],
  ["ALBEDO_INLINE_IMAGES", "0 turns inline images off on a terminal that could draw them (the label line stays)"],
  ["ALBEDO_SKIP_SETUP", "1 skips `albedo setup` during npm install and npm link"],
  ["HOME", "where user skills are found: ~/.albedo/skills and ~/.agents/skills"],
  ["JUPYTER_PATH, JUPYTER_DATA_DIR, XDG_DATA_HOME, JUPYTER_PREFER_ENV_PATH", "where kernelspecs are found and installed, as Jupyter reads them"],
  ["JUPYTER_TOKEN", "the token for a remote Jupyter Server (--remote, kernel.remote; kernel.remote.token_env names another variable)"],
  ["NO_COLOR", "set to anything to turn colour off (it is off anyway when output is piped)"],
  ["PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX, PIP_RETRIES", "passed to pip by `albedo setup` (an offline or mirrored install)"],
];

/** What albedo puts in a kernel's environment; the albedo package in the kernel reads them. */
export const KERNEL_ENVIRONMENT: readonly (readonly [string, string])[] = [
  ["ALBEDO_RPC_ENDPOINT, ALBEDO_RPC_TOKEN", "where the kernel's calls go, and the session's token"],
  ["ALBEDO_RPC_DEADLINE_MS, ALBEDO_RPC_MAX_MESSAGE_BYTES", "the longest a call waits, the largest message"],
  ["ALBEDO_EXTENSIONS", "the session's extensions: python,skills or python"],
  ["ALBEDO_INSTALL, ALBEDO_NODE", "in the albedo kernelspec: the install a notebook's kernel runs, and its node"],
  ["ALBEDO_EGRESS_SOCKET, ALBEDO_EGRESS_CA", "in a sandboxed kernel with a network policy: the egress proxy's socket, and the local CA when the policy adds secrets"],
  ["HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY", "the kernel's relay to that proxy, for the kernel and every process it starts"],
  ["SSL_CERT_FILE, REQUESTS_CA_BUNDLE, PIP_CERT", "the CA bundle with the local CA, when the policy adds secrets"],
  ["CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS, GIT_SSL_CAINFO", "the same bundle, for curl, node and git"],
];

/** Topics `albedo help TOPIC` explains beyond the commands themselves. */
export const TOPICS: Readonly<Record<string, string>> = {
  environment: [
    "Environment variables albedo reads:",
    "",
    ...ENVIRONMENT.flatMap(([name, text]) => hangingRow(`  ${name}  `, text, LEFT_COLUMN)),
    "",
    ...wrap("Set by albedo in a kernel's environment (read by the albedo package inside it; not for you to set):", TERMINAL_COLUMNS),
    "",
    ...KERNEL_ENVIRONMENT.flatMap(([name, text]) => hangingRow(`  ${name}  `, text, LEFT_COLUMN)),
    "",
  ].join("\n"),
  settings: [
    "Settings live in three scopes; the narrowest one that names a skill decides:",
    "",
    "  session   held by one session (a client of the daemon sets it)",
    "  project   <workspace>/.albedo/settings.json   (--project)",
    "  global    $ALBEDO_HOME/settings.json          (--global, the default)",
    "",
    "The daemon writes them; these commands ask it to (and start one if none runs):",
    "",
    "  albedo skills off pdf-processing --project    turn a skill off here",
    "  albedo skills clear pdf-processing --project  let a wider scope decide",
    "  albedo settings get                           every scope, as read",
    "  albedo settings set sandbox required          set one key",
    "  albedo settings unset kernel.pool             remove one key (or a section)",
    "",
    ...wrap("Every key a settings file may hold, and what it takes (* read from the global file only, so --project refuses it):", TERMINAL_COLUMNS),
    "",
    ...settingsKeys().flatMap(({ key, takes, globalOnly }) => hangingRow(`  ${key}${globalOnly ? " *" : ""}  `, takes, LEFT_COLUMN)),
    "",
    ...wrap(`\`settings set\` takes the keys whose value is one word (not skills.on, skills.off, python.packages, kernel.remote or mcp.servers: edit those in the file, or use \`albedo skills on|off|clear\` and \`albedo mcp add\`). A VALUE after its KEY may start with -, as a negative number does.`, TERMINAL_COLUMNS),
    "",
    "`albedo skills list` shows which scope decided each skill.",
    "",
  ].join("\n"),
  "exit-codes": [
    "Exit codes:",
    "",
    "  0    done",
    "  1    it ran and failed: a Python error, an invalid skill, a failed check",
    "  2    usage error: a mistyped command, option or argument",
    "  130  interrupted by Ctrl-C",
    "  N    `albedo exec`: the status a script passed to sys.exit(N)",
    "",
  ].join("\n"),
};
