/** One argument of a command (C-1). The last argument takes the rest of the raw text (C-3). */
export interface ArgumentSpec {
  readonly name: string;
  readonly help: string;
  readonly required: boolean;
}

/** Who may call a command. */
export type Caller = "user" | "model";

/**
 * The single declaration of a session command (C-1). It drives the CLI menu and autocomplete,
 * user invocation, and the Python `commands` bindings.
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
