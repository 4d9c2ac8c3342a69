import { parseArgs, UsageError } from "./args.js";
import { commandHelp, HELP_OPTION, type CliCommand, type CliIO } from "./command.js";
import { COMMANDS } from "./registry.js";
import { visibleControls } from "../text/index.js";

function overview(): string {
  const rows = COMMANDS.map((c) => `  albedo ${`${c.path.join(" ")} ${c.usage}`.trim().padEnd(44)} ${c.summary}`);
  return ["usage: albedo <command> [options]", "", "commands:", ...rows, "", "Run `albedo <command> --help` for a command's options.", ""].join("\n");
}

/** Finds the longest declared command path that prefixes argv. */
function match(argv: readonly string[]): { command: CliCommand; rest: readonly string[] } | undefined {
  let best: CliCommand | undefined;
  for (const command of COMMANDS) {
    const fits = command.path.every((word, i) => argv[i] === word);
    if (fits && (best === undefined || command.path.length > best.path.length)) best = command;
  }
  return best && { command: best, rest: argv.slice(best.path.length) };
}

/** Runs the CLI on argv and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.stdout.write(overview());
    return 0;
  }
  const found = match(argv);
  if (found === undefined) {
    const group = COMMANDS.filter((c) => c.path[0] === argv[0]);
    if (group.length > 0 && (argv[1] === "--help" || argv[1] === "-h")) {
      io.stdout.write(commandGroupHelp(argv[0]!, group));
      return 0;
    }
    io.stderr.write(group.length > 0 ? commandGroupHelp(argv[0]!, group) : `albedo: unknown command "${argv.join(" ")}"\n\n${overview()}`);
    return 2;
  }
  const { command, rest } = found;
  try {
    const args = parseArgs(rest, [...command.options, HELP_OPTION]);
    if (args.options.has("help")) {
      io.stdout.write(commandHelp(command));
      return 0;
    }
    return await command.run(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`albedo ${command.path.join(" ")}: ${error.message}\n\n${commandHelp(command)}`);
      return 2;
    }
    throw error;
  }
}

function commandGroupHelp(group: string, commands: readonly CliCommand[]): string {
  const rows = commands.map((c) => `  albedo ${`${c.path.join(" ")} ${c.usage}`.trim().padEnd(44)} ${c.summary}`);
  return [`usage: albedo ${group} <command> [options]`, "", ...rows, ""].join("\n");
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith("/cli/main.js");
if (isMain) {
  // A reader that went away (`albedo … | head`) ends the command quietly, as with any Unix tool.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
  const io: CliIO = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
  runCli(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`albedo: ${visibleControls(error instanceof Error ? error.message : String(error))}\n`);
      process.exitCode = 1;
    },
  );
}
