import { CliFailure, parseArgs, UsageError } from "./plumbing/args.js";
import { failureText, type CliIO, type DeclaredCommand } from "./plumbing/command.js";
import { commandHelp, groupHelp, HELP_OPTION, overview, TOPICS, usageLine } from "./plumbing/help.js";
import { COMMANDS } from "./plumbing/registry.js";
import { styleFor } from "./terminal/style.js";
import { didYouMean, visibleControls } from "../text/index.js";
import { installVersion } from "../platform/index.js";

/** Exit status of a usage error (a mistyped command, option or argument). */
export const EXIT_USAGE = 2;

/** Finds the longest declared command path that prefixes argv. */
function match(argv: readonly string[]): { command: DeclaredCommand; rest: readonly string[] } | undefined {
  let best: DeclaredCommand | undefined;
  for (const command of COMMANDS) {
    const fits = command.path.every((word, i) => argv[i] === word);
    if (fits && (best === undefined || command.path.length > best.path.length)) best = command;
  }
  return best && { command: best, rest: argv.slice(best.path.length) };
}

const firstWords = (): string[] => [...new Set(COMMANDS.map((c) => c.path[0]!))];
const isHelpFlag = (word: string | undefined): boolean => word === "--help" || word === "-h";

/** Writes an error line (the program's name in bold red on a terminal) and returns EXIT_USAGE. */
function usageFailure(io: CliIO, where: string, message: string, hint: string): number {
  const style = styleFor(io.stderr, io.env);
  io.stderr.write(`${style.red(style.bold(`${where}:`))} ${visibleControls(message)}\n${hint}`);
  return EXIT_USAGE;
}

/** `albedo help [TOPIC…]`: the overview, a group, a command (its module loaded for its options), or a topic. */
async function help(words: readonly string[], io: CliIO): Promise<number> {
  if (words.length === 0) {
    io.stdout.write(overview(COMMANDS));
    return 0;
  }
  const topic = TOPICS[words.join(" ")];
  if (topic !== undefined) {
    io.stdout.write(topic);
    return 0;
  }
  const exact = COMMANDS.find((c) => c.path.join(" ") === words.join(" "));
  if (exact !== undefined) {
    io.stdout.write(commandHelp(exact, (await exact.load()).options));
    return 0;
  }
  const group = COMMANDS.filter((c) => c.path[0] === words[0]);
  if (group.length > 0 && words.length === 1) {
    io.stdout.write(groupHelp(words[0]!, group));
    return 0;
  }
  const known = [...Object.keys(TOPICS), ...firstWords(), ...COMMANDS.map((c) => c.path.join(" "))];
  return usageFailure(io, "albedo help", `no help topic "${words.join(" ")}"${didYouMean(words.join(" "), known)}`, `Topics: ${Object.keys(TOPICS).join(", ")}. Run \`albedo --help\` for the commands.\n`);
}

/** A first word that is no command, or a group's second word that is none of its commands. */
function unknownCommand(argv: readonly string[], io: CliIO): number {
  const group = COMMANDS.filter((c) => c.path[0] === argv[0]);
  if (group.length === 0) {
    return usageFailure(io, "albedo", `unknown command "${argv[0]}"${didYouMean(argv[0]!, firstWords())}`, "Run `albedo --help` for the commands.\n");
  }
  if (argv.length === 1 || isHelpFlag(argv[1])) {
    const text = groupHelp(argv[0]!, group);
    if (isHelpFlag(argv[1])) {
      io.stdout.write(text);
      return 0;
    }
    io.stderr.write(text);
    return EXIT_USAGE;
  }
  const names = group.map((c) => c.path[1]!);
  return usageFailure(io, `albedo ${argv[0]}`, `unknown command "${argv[1]}"${didYouMean(argv[1]!, names)}`, `Run \`albedo ${argv[0]} --help\` for its commands.\n`);
}

/** Runs the CLI on argv and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  if (argv.length === 0 && !(io.stdin.isTTY && io.stdout.isTTY)) {
    io.stdout.write(overview(COMMANDS));
    return 0;
  }
  const words = argv.length === 0 ? ["console"] : argv;
  if (isHelpFlag(words[0])) return help([], io);
  if (words[0] === "help") return help(words.slice(1), io);
  if (words[0] === "--version" || words[0] === "-V") {
    io.stdout.write(`albedo ${installVersion()}\n`);
    return 0;
  }
  const found = match(words);
  if (found === undefined) return unknownCommand(words, io);
  const { command, rest } = found;
  const where = `albedo ${command.path.join(" ")}`;
  // The command's module, and what it imports, load only now.
  const loaded = await command.load();
  try {
    const args = parseArgs(rest, [...loaded.options, HELP_OPTION], loaded.dashedValueAt);
    if (args.options.has("help")) {
      io.stdout.write(commandHelp(command, loaded.options));
      return 0;
    }
    return await loaded.run(args, io);
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(io, where, error.message, `${usageLine(command)}\nRun \`${where} --help\` for the options.\n`);
    if (error instanceof CliFailure) {
      const style = styleFor(io.stderr, io.env);
      io.stderr.write(`${style.red(style.bold(`${where}:`))} ${visibleControls(error.message)}\n`);
      return error.exitCode;
    }
    throw error;
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith("/cli/main.js");
if (isMain) {
  // A reader that went away (`albedo … | head`) ends the command quietly, as with any Unix tool.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
  const io: CliIO = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), exit: (code) => process.exit(code) };
  runCli(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      const style = styleFor(process.stderr, process.env);
      process.stderr.write(`${style.red(style.bold("albedo:"))} ${failureText(error)}`);
      process.exitCode = 1;
    },
  );
}
