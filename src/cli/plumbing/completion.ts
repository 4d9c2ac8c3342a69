/**
 * `albedo completion bash|zsh`: a shell completion script generated from the command declarations,
 * so that a new command or option completes without anyone editing a script. zsh runs the bash
 * function through its bashcompinit layer, as many CLIs ship it.
 */
import { UsageError } from "./args.js";
import type { OptionSpec } from "./args.js";
import type { CliCommand, DeclaredCommand } from "./command.js";
import { HELP_OPTION, TOPICS } from "./help.js";

/** Shells `albedo completion` writes a script for. */
export const COMPLETION_SHELLS = ["bash", "zsh"] as const;

/** Values completed after an option, by the option's value placeholder. */
const VALUE_COMPLETIONS: Readonly<Record<string, string>> = {
  DIR: "compgen -d -- \"$cur\"",
  MODE: "compgen -W 'auto required off' -- \"$cur\"",
};

const quoteWords = (words: readonly string[]): string => `'${words.join(" ")}'`;

/** What completion knows of a command: its words and its options. */
export interface CompletedCommand {
  readonly path: readonly string[];
  readonly options: readonly OptionSpec[];
}

/** The bash completion function for `commands`. */
export function bashCompletion(commands: readonly CompletedCommand[]): string {
  const groups = new Map<string, string[]>();
  for (const command of commands) {
    if (command.path.length > 1) groups.set(command.path[0]!, [...(groups.get(command.path[0]!) ?? []), command.path[1]!]);
  }
  const firstWords = [...new Set([...commands.map((c) => c.path[0]!), "help"])];
  const byLength = [...commands].sort((a, b) => b.path.length - a.path.length);
  const optionCases = byLength.map((c) => {
    const path = c.path.join(" ");
    const options = [...c.options, HELP_OPTION].map((o) => `--${o.name}`);
    return `    "${path}"|"${path} "*) opts=${quoteWords(options)} ;;`;
  });
  const groupCases = [...groups].map(([group, subs]) => `    "${group}") subs=${quoteWords(subs)} ;;`);
  const valueOptions = new Map<string, string>();
  for (const command of commands) {
    for (const option of command.options) {
      const how = option.value === undefined ? undefined : (VALUE_COMPLETIONS[option.value] ?? "compgen -f -- \"$cur\"");
      if (how !== undefined && !valueOptions.has(option.name)) valueOptions.set(option.name, how);
    }
  }
  const valueCases = [...valueOptions].map(([name, how]) => `    --${name}) COMPREPLY=($(${how})); return ;;`);
  return [
    "# albedo completion for bash. Load it with: source <(albedo completion bash)",
    "# or save it as ~/.local/share/bash-completion/completions/albedo",
    "_albedo() {",
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path="" opts="" subs="" i',
    '  case "$prev" in',
    ...valueCases,
    "  esac",
    "  for ((i = 1; i < COMP_CWORD; i++)); do",
    '    case "${COMP_WORDS[i]}" in -*) ;; *) path="${path:+$path }${COMP_WORDS[i]}" ;; esac',
    "  done",
    '  case "$path" in',
    `    "") subs=${quoteWords(firstWords)} ;;`,
    `    "help") subs=${quoteWords([...firstWords.filter((w) => w !== "help"), ...Object.keys(TOPICS)])} ;;`,
    `    "completion") subs=${quoteWords(COMPLETION_SHELLS)} ;;`,
    ...groupCases,
    "  esac",
    '  case "$path" in',
    ...optionCases,
    "  esac",
    '  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))',
    '  elif [[ -n "$subs" ]]; then COMPREPLY=($(compgen -W "$subs" -- "$cur"))',
    '  else COMPREPLY=($(compgen -f -- "$cur")); fi',
    "}",
    "complete -o default -F _albedo albedo",
    "",
  ].join("\n");
}

/** The zsh script: the bash function under zsh's bash-completion emulation. */
export function zshCompletion(commands: readonly CompletedCommand[]): string {
  return [
    "#compdef albedo",
    "# albedo completion for zsh. Load it with: source <(albedo completion zsh)",
    "autoload -U +X compinit && compinit",
    "autoload -U +X bashcompinit && bashcompinit",
    bashCompletion(commands).split("\n").slice(2).join("\n"),
  ].join("\n");
}

/** `albedo completion bash|zsh`, reading the command list when it runs (the registry holds this command too); it loads every command's module for its options. */
export function completionCommand(commands: () => readonly DeclaredCommand[]): CliCommand {
  return {
    options: [],
    async run(args, io) {
      const shell = args.positionals[0];
      if (args.positionals.length !== 1 || !(COMPLETION_SHELLS as readonly string[]).includes(shell!)) {
        throw new UsageError(`name one shell: ${COMPLETION_SHELLS.join(" or ")}`);
      }
      const completed = await Promise.all(commands().map(async (c) => ({ path: c.path, options: (await c.load()).options })));
      io.stdout.write(shell === "bash" ? bashCompletion(completed) : zshCompletion(completed));
      return 0;
    },
  };
}
