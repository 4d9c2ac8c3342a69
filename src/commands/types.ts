import type { Activation, CatalogSnapshot } from "../skills/index.js";

/** One argument of a command (C-1). The last argument takes the rest of the raw text (C-3). */
export interface ArgumentSpec {
  readonly name: string;
  readonly help: string;
  readonly required: boolean;
  /** The values it takes, when it takes only a few: what Tab completes. */
  readonly choices?: readonly string[];
}

/** Who may call a command. */
export type Caller = "user" | "model";

/** Named argument values after splitting and checking (C-3). */
export type CommandArguments = Readonly<Record<string, string>>;

/**
 * The single declaration of a session command (C-1). It drives the CLI menu and autocomplete,
 * user invocation, and the Python `commands` bindings. Plain data: this is what crosses the wire.
 */
export interface CommandDeclaration {
  /** Slash name including the slash: "/help", "/demo", "/skill:model". */
  readonly name: string;
  readonly description: string;
  readonly arguments: readonly ArgumentSpec[];
  readonly callers: readonly Caller[];
  /** Whether a user call submits a model turn. */
  readonly submitsTurn: boolean;
  /** The skill name when this command activates a skill. */
  readonly skill?: string;
}

/** A command: its declaration, what it does, and how a person reads its result, in one object. */
export interface Command extends CommandDeclaration {
  /** Runs the command with checked arguments; throws AppError for a request it cannot serve. */
  run(context: CommandContext, args: CommandArguments): Promise<unknown>;
  /** The result as text for a console or notebook, fitting `columns` (TERMINAL_COLUMNS when unknown); absent means "show the data". */
  text?(result: unknown, columns?: number): string;
}

/**
 * What a command may use while it runs: the catalog it was resolved from and the skills behind
 * it, plus the few things only its session can do. The session builds one per view.
 */
export interface CommandContext {
  /** The command catalog the call was resolved against. */
  readonly commands: CommandCatalog;
  /** The snapshot that catalog was built from. */
  readonly skills: CatalogSnapshot;
  /** Rediscovers and swaps the session's catalog (K-7). */
  reload(): Promise<unknown>;
  status(): unknown;
  modelInfo(): unknown;
  /** The activation payload of a skill of `skills` (C-5), through the session's guarded skill access. */
  activate(skill: string, text: string): Promise<Activation>;
}

/** The commands of one catalog snapshot: built-ins first, then skills by name. Immutable. */
export interface CommandCatalog {
  readonly revision: string;
  readonly commands: readonly Command[];
}
