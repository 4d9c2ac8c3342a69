import { jsonWithoutControls, visibleControls } from "../../text/index.js";
import type { OptionSpec, ParsedArgs } from "./args.js";

/** Where a command writes; tests pass their own. */
export interface CliIO {
  /** `columns` is the terminal's width when stdout is one. */
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Ends the process with `code` (main gives process.exit; tests none). For a command whose process must not outlive its run, whatever is left pending. */
  readonly exit?: (code: number) => void;
}

/** A subcommand as the registry declares it, light: what the overview, a group's help and did-you-mean need, and how to load the rest. */
export interface DeclaredCommand {
  /** Words after `albedo`, e.g. ["skills", "list"]. */
  readonly path: readonly string[];
  readonly summary: string;
  /** Positional part of the usage line, e.g. "NAME [RESOURCE]". */
  readonly usage: string;
  /** Imports the command's module (and whatever it uses) and returns its options and code. */
  load(): Promise<CliCommand>;
}

/** What a command's module holds: its options (declared beside the code that reads them; its --help is made from them) and its code. */
export interface CliCommand {
  readonly options: readonly OptionSpec[];
  /** The positional (by index) taken as given even when it starts with `-`: a VALUE such as `-3` after its KEY. */
  readonly dashedValueAt?: number;
  /** Returns the process exit code. */
  run(args: ParsedArgs, io: CliIO): Promise<number>;
}

export const JSON_OPTION: OptionSpec = { name: "json", help: "machine-readable output" };
export const WORKSPACE_OPTION: OptionSpec = {
  name: "workspace",
  value: "DIR",
  help: "workspace directory (default: the current directory)",
};

/** Writes a JSON document followed by a newline, every control character escaped (it may reach a terminal). */
export function writeJson(io: CliIO, value: unknown): void {
  io.stdout.write(`${jsonWithoutControls(JSON.stringify(value, null, 2))}\n`);
}

export const REMOTE_OPTION: OptionSpec = {
  name: "remote",
  value: "URL",
  help: "run the kernel on this Jupyter Server or Enterprise Gateway (token from $JUPYTER_TOKEN, or the variable kernel.remote.token_env names)",
};

export const RESUME_OPTION: OptionSpec = {
  name: "resume",
  value: "ID",
  help: "start from the checkpoint of this closed session: its variables are loaded before the first cell",
};

export const NETWORK_OPTION: OptionSpec = {
  name: "network",
  value: "POLICY",
  help: "this session's own network policy instead of the global one: off, PATTERN[,PATTERN...] to allow just those, or a JSON policy object; on (the whole network) only while the global setting is true",
};

export const SANDBOX_OPTION: OptionSpec = {
  name: "sandbox",
  value: "MODE",
  help: "kernel sandbox for this run: auto, required or off (default: the global setting, else auto)",
};

/** An error as the command line prints it after its prefix: the message, then its `fix` line when the error knows its remedy. */
export function failureText(error: unknown): string {
  const message = visibleControls(error instanceof Error ? error.message : String(error));
  const fix = error instanceof Error ? (error as { fix?: unknown }).fix : undefined;
  return typeof fix === "string" && fix !== "" ? `${message}\nfix: ${visibleControls(fix)}\n` : `${message}\n`;
}
