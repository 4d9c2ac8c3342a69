import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { stringOption, UsageError, type ParsedArgs } from "./args.js";
import type { CliIO } from "./command.js";

/** The workspace from --workspace (resolved against the cwd) or the cwd; a missing directory is a usage error. */
export async function workspaceOf(args: ParsedArgs, io: CliIO): Promise<string> {
  const given = stringOption(args, "workspace");
  const workspace = resolve(io.cwd, given ?? ".");
  const found = await stat(workspace).catch(() => undefined);
  if (found === undefined || !found.isDirectory()) throw new UsageError(`--workspace ${given ?? workspace} is not a directory`);
  return workspace;
}
