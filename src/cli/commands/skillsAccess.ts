import { isAppError } from "../../errors/index.js";
import { DEFAULT_READ_LIMIT, discoverCatalog, findSkill, listResources, MAX_READ_LIMIT, readResource } from "../../skills/index.js";
import type { SkillEntry } from "../../skills/index.js";
import { didYouMean, visibleControls } from "../../text/index.js";
import { intOption, UsageError, type ParsedArgs } from "../plumbing/args.js";
import { workspaceOf } from "../plumbing/workspace.js";
import { JSON_OPTION, WORKSPACE_OPTION, writeJson, type CliCommand, type CliIO } from "../plumbing/command.js";
import { homeDir } from "../../platform/index.js";

/** Finds the named skill in a fresh discovery of the workspace, or reports it on stderr and returns undefined. */
async function skillFor(args: ParsedArgs, io: CliIO, commandName: string): Promise<SkillEntry | undefined> {
  const name = args.positionals[0];
  if (name === undefined) throw new UsageError("missing NAME");
  const snapshot = await discoverCatalog({ workspace: await workspaceOf(args, io), home: homeDir(io.env) });
  const entry = findSkill(snapshot, name);
  if (entry !== undefined) return entry;
  const hint = didYouMean(name, snapshot.skills.map((s) => s.name), "; see `albedo skills list`");
  io.stderr.write(`${visibleControls(`albedo ${commandName}: no skill named "${name}" in this catalog${hint}`)}\n`);
  return undefined;
}

/** Runs an access and turns a wire error into a message and exit code 1. */
async function reported(io: CliIO, commandName: string, action: () => Promise<number>): Promise<number> {
  try {
    return await action();
  } catch (error) {
    if (!isAppError(error)) throw error;
    io.stderr.write(`${visibleControls(`albedo ${commandName}: ${error.message}`)}\n`);
    return 1;
  }
}

/** `albedo skills read`: one page of a skill resource (R-2), raw bytes or the ReadResult as JSON. */
export const skillsRead: CliCommand = {
  options: [
    { name: "offset", value: "N", help: "byte offset to start at (default 0)" },
    { name: "limit", value: "N", help: `bytes to read, 1 to ${MAX_READ_LIMIT} (default ${DEFAULT_READ_LIMIT})` },
    WORKSPACE_OPTION,
    JSON_OPTION,
  ],
  async run(args, io) {
    const offset = intOption(args, "offset", 0);
    const limit = intOption(args, "limit", DEFAULT_READ_LIMIT);
    if (!Number.isSafeInteger(offset)) throw new UsageError(`--offset is too large: ${offset}`);
    if (limit < 1 || limit > MAX_READ_LIMIT) throw new UsageError(`--limit must be between 1 and MAX_READ_LIMIT = ${MAX_READ_LIMIT}, got ${limit}`);
    if (args.positionals.length > 2) throw new UsageError(`unexpected argument ${args.positionals[2]}`);
    const entry = await skillFor(args, io, "skills read");
    if (entry === undefined) return 1;
    return reported(io, "skills read", async () => {
      const page = await readResource(entry, args.positionals[1], offset, limit);
      if (args.options.has("json")) {
        writeJson(io, page);
        return 0;
      }
      // The bytes asked for, as `cat` would print them: reading a file is not showing a name.
      io.stdout.write(page.encoding === "base64" ? Buffer.from(page.content, "base64") : page.content);
      if (page.truncated) io.stderr.write(`albedo skills read: ${page.size} bytes in all; continue with --offset ${page.next_offset}\n`);
      return 0;
    });
  },
};

/** `albedo skills resources`: the files of a skill (R-1), one per line or as JSON with diagnostics. */
export const skillsResources: CliCommand = {
  options: [WORKSPACE_OPTION, JSON_OPTION],
  async run(args, io) {
    if (args.positionals.length > 1) throw new UsageError(`unexpected argument ${args.positionals[1]}`);
    const entry = await skillFor(args, io, "skills resources");
    if (entry === undefined) return 1;
    return reported(io, "skills resources", async () => {
      const listing = await listResources(entry);
      if (args.options.has("json")) {
        writeJson(io, { resources: listing.resources, diagnostics: listing.diagnostics });
        return 0;
      }
      io.stdout.write(listing.resources.map((path) => `${visibleControls(path)}\n`).join(""));
      for (const d of listing.diagnostics) io.stderr.write(`${visibleControls(`${d.severity} ${d.code} ${d.path}: ${d.message}`)}\n`);
      return 0;
    });
  },
};
