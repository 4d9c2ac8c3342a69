/**
 * `albedo skills on|off|clear` and `albedo settings get|set`: settings changed the one way D-4
 * allows, through the daemon's settings API (`GET /settings`, `PATCH /settings` with If-Match),
 * starting a daemon for the call when none runs. The CLI never writes a settings file itself.
 */
import { API, DaemonError, type DaemonClient, type SettingsDocument, type SettingsFileResource } from "../../api/index.js";
import { discoverCatalog } from "../../skills/index.js";
import { effectiveEnablement, globalOnlyMessage, isGlobalOnly, settingAt, type Settings } from "../../settings/index.js";
import { didYouMean, visibleControls } from "../../text/index.js";
import { CliFailure, UsageError, type ParsedArgs } from "../plumbing/args.js";
import { JSON_OPTION, WORKSPACE_OPTION, writeJson, type CliCommand, type CliIO } from "../plumbing/command.js";
import { daemonFor } from "../plumbing/daemonAccess.js";
import { effectiveLine, parseSettingValue, SETTABLE_KEYS, settingPatch, UNSETTABLE_KEYS, unsetPatch } from "./settingKeys.js";
import { workspaceOf } from "../plumbing/workspace.js";
import { homeDir } from "../../platform/index.js";

/** Attempts at a read-modify-write whose If-Match lost a race with another writer. */
const MAX_WRITE_ATTEMPTS = 3;

export type Scope = "global" | "project";

/** One settings file as GET /settings answers it, its settings typed as the settings domain reads them. */
export interface ScopeView {
  readonly scope: Scope;
  readonly file: string;
  readonly revision: string;
  readonly settings: Settings;
}

export interface SettingsAnswer {
  readonly global: ScopeView;
  readonly project?: ScopeView;
}

export const SCOPE_OPTIONS = [
  { name: "project", help: "the workspace's .albedo/settings.json" },
  { name: "global", help: "the state dir's settings.json (the default)" },
] as const;

export function scopeOf(args: ParsedArgs): Scope {
  if (args.options.has("project") && args.options.has("global")) throw new UsageError("give --project or --global, not both");
  return args.options.has("project") ? "project" : "global";
}

export async function readAll(daemon: DaemonClient, workspace: string): Promise<SettingsAnswer> {
  const answer: Promise<SettingsDocument> = daemon.call(API.getSettings, { query: { workspace } });
  return (answer as Promise<unknown> as Promise<SettingsAnswer>).catch((error: unknown) => {
    throw failure(error);
  });
}

/** PATCH /settings for one scope, reading the revision first and reading again when another writer won (409). */
export async function patch(daemon: DaemonClient, scope: Scope, workspace: string, build: (current: Settings) => Record<string, unknown>): Promise<ScopeView> {
  for (let attempt = 1; ; attempt++) {
    const current = (await readAll(daemon, workspace))[scope]!;
    const body = { scope, ...(scope === "project" ? { workspace } : {}), ...build(current.settings) };
    try {
      // The body is built key by key from what the user typed; the daemon's schema judges it.
      const written: SettingsFileResource = await daemon.call(API.patchSettings, { body: body as never, ifMatch: current.revision });
      return written as unknown as ScopeView;
    } catch (error) {
      if (!(error instanceof DaemonError) || error.code !== "catalog_changed" || attempt >= MAX_WRITE_ATTEMPTS) throw failure(error);
      // Another writer got in between the read and the write: read again and redo the change on its result.
    }
  }
}

/** A refusal from the daemon as the CLI reports it (the problem's own words); anything else passes. */
function failure(error: unknown): unknown {
  return error instanceof DaemonError ? new CliFailure(`the daemon refused: ${error.message} (${error.code})`) : error;
}

/** The skill names this workspace's catalog holds, for the closest-name warning. */
async function knownSkills(workspace: string, io: CliIO): Promise<string[]> {
  const snapshot = await discoverCatalog({ workspace, home: homeDir(io.env) });
  return snapshot.skills.map((s) => s.name);
}

/** The names a scope's on and off lists hold. */
function namedIn(view: ScopeView | undefined): string[] {
  return [...(view?.settings.skills?.on ?? []), ...(view?.settings.skills?.off ?? [])];
}

/**
 * What `skills VERB NAMES` warns about before writing: for on and off, a name no skill of the
 * catalog has (saved anyway); for clear, a name the scope's lists do not hold (nothing to clear).
 */
function switchWarnings(verb: "on" | "off" | "clear", names: readonly string[], known: readonly string[], named: readonly string[], scope: Scope): string[] {
  if (verb === "clear") {
    return names.filter((name) => !named.includes(name)).map((name) => `"${name}" is not named in the ${scope} settings, so there was nothing to clear${didYouMean(name, named)}`);
  }
  return names
    .filter((name) => !known.includes(name.normalize("NFKC")))
    .map((name) => `no skill named "${name}" in this workspace's catalog; saved anyway, for one installed later${didYouMean(name, known)}`);
}

function switchCommand(verb: "on" | "off" | "clear"): CliCommand {
  const who = `albedo skills ${verb}`;
  return {
    options: [...SCOPE_OPTIONS, WORKSPACE_OPTION, JSON_OPTION],
    async run(args, io) {
      const names = args.positionals;
      if (names.length === 0) throw new UsageError("name at least one skill");
      const scope = scopeOf(args);
      const workspace = await workspaceOf(args, io);
      const known = await knownSkills(workspace, io);
      const daemon = await daemonFor(io, who);
      const named = verb === "clear" ? namedIn((await readAll(daemon, workspace))[scope]) : [];
      const warnings = switchWarnings(verb, names, known, named, scope);
      const cleared = names.filter((name) => named.includes(name));
      if (verb === "clear" && cleared.length === 0) {
        if (args.options.has("json")) writeJson(io, { scope, cleared: [], warnings });
        else for (const warning of warnings) io.stderr.write(`${who}: ${visibleControls(warning)}\n`);
        return 0;
      }
      const written = await patch(daemon, scope, workspace, () => ({ skills: { [verb]: verb === "clear" ? cleared : names } }));
      const answer = await readAll(daemon, workspace);
      const scopes = { global: answer.global.settings, project: answer.project?.settings ?? {} };
      const effective = Object.fromEntries(names.map((name) => [name, effectiveEnablement(name, scopes)]));
      if (args.options.has("json")) {
        writeJson(io, { scope, file: written.file, revision: written.revision, effective: Object.fromEntries(names.map((n) => [n, { enabled: effective[n]!.enabled, decided_by: effective[n]!.decidedBy }])), warnings });
        return 0;
      }
      for (const warning of warnings) io.stderr.write(`${who}: ${verb === "clear" ? "" : "warning: "}${visibleControls(warning)}\n`);
      const lines = (verb === "clear" ? cleared : names).map((name) => verdictLine(name, effective[name]!, verb, scope, known));
      io.stdout.write(`${[`${who}: wrote ${written.file} (${scope})`, ...lines].join("\n")}\n`);
      return 0;
    },
  };
}

/** "  NAME: on here (global)", with who decides when another scope does, and a cleared name no skill has. */
function verdictLine(name: string, verdict: { enabled: boolean; decidedBy: string }, verb: "on" | "off" | "clear", scope: Scope, known: readonly string[]): string {
  const other = verdict.decidedBy !== scope && verdict.decidedBy !== "default" && verb !== "clear" ? ` — the ${verdict.decidedBy} settings decide` : "";
  const nameless = verb === "clear" && !known.includes(name.normalize("NFKC")) ? " — cleared a name no skill of this workspace's catalog has" : "";
  return `  ${visibleControls(name)}: ${verdict.enabled ? "on" : "off"} here (${verdict.decidedBy})${other}${nameless}`;
}

export const skillsOn = switchCommand("on");
export const skillsOff = switchCommand("off");
export const skillsClear = switchCommand("clear");

function shown(value: unknown): string {
  return value === undefined ? "(not set)" : visibleControls(JSON.stringify(value));
}

export const settingsGet: CliCommand = {
  options: [...SCOPE_OPTIONS, WORKSPACE_OPTION, JSON_OPTION],
  async run(args, io) {
    const [key, ...extra] = args.positionals;
    if (extra.length > 0) throw new UsageError(`one KEY at most, got ${args.positionals.join(" ")}`);
    const workspace = await workspaceOf(args, io);
    const answer = await readAll(await daemonFor(io, "albedo settings get"), workspace);
    const only = args.options.has("project") ? ["project"] : args.options.has("global") ? ["global"] : ["global", "project"];
    const views = [answer.global, answer.project].filter((v): v is ScopeView => v !== undefined && only.includes(v.scope));
    const pick = (view: ScopeView) => (key === undefined ? view.settings : settingAt(view.settings, key));
    if (args.options.has("json")) {
      writeJson(io, Object.fromEntries(views.map((v) => [v.scope, { file: v.file, revision: v.revision, ...(key === undefined ? { settings: v.settings } : { key, value: pick(v) ?? null }) }])));
      return 0;
    }
    const lines = views.flatMap((view) =>
      key === undefined
        ? [`${view.scope} (${view.file}):`, ...JSON.stringify(view.settings, null, 2).split("\n").map((line) => `  ${visibleControls(line)}`)]
        : [`${view.scope}: ${visibleControls(key)} = ${shown(pick(view))}`],
    );
    const effective = key === undefined ? undefined : effectiveLine(answer.global?.settings, key);
    if (effective !== undefined) lines.push(effective);
    io.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  },
};

export const settingsSet: CliCommand = {
  options: [...SCOPE_OPTIONS, WORKSPACE_OPTION, JSON_OPTION],
  dashedValueAt: 1,
  async run(args, io) {
    if (args.positionals.length !== 2) throw new UsageError("give KEY and VALUE, e.g. albedo settings set sandbox required");
    const [key, text] = args.positionals as [string, string];
    const spec = SETTABLE_KEYS.find((k) => k.key === key);
    if (spec === undefined) throw new UsageError(`no setting ${key}${didYouMean(key, SETTABLE_KEYS.map((k) => k.key), "; see `albedo help settings`")}`);
    const value = parseSettingValue(spec, text);
    const scope = scopeOf(args);
    // Saved in a project file it would change nothing: refused before any daemon is asked (the daemon refuses it too).
    if (scope !== "global" && isGlobalOnly(key)) throw new UsageError(`${globalOnlyMessage(key, scope)}: drop --project`);
    const workspace = await workspaceOf(args, io);
    const daemon = await daemonFor(io, "albedo settings set");
    const written = await patch(daemon, scope, workspace, (current) => settingPatch(current, spec, value));
    if (args.options.has("json")) writeJson(io, { scope, file: written.file, revision: written.revision, key, value: settingAt(written.settings, key) ?? null });
    else io.stdout.write(`albedo settings set: ${visibleControls(key)} = ${shown(settingAt(written.settings, key))} in ${written.file} (${scope})\n`);
    return 0;
  },
};

export const settingsUnset: CliCommand = {
  options: [...SCOPE_OPTIONS, WORKSPACE_OPTION, JSON_OPTION],
  async run(args, io) {
    if (args.positionals.length !== 1) throw new UsageError("give one KEY, e.g. albedo settings unset kernel.pool");
    const [key] = args.positionals as [string];
    if (!UNSETTABLE_KEYS.includes(key)) throw new UsageError(`no setting ${key}${didYouMean(key, [...UNSETTABLE_KEYS], "; see `albedo help settings`")}`);
    const scope = scopeOf(args);
    const workspace = await workspaceOf(args, io);
    const daemon = await daemonFor(io, "albedo settings unset");
    const before = (await readAll(daemon, workspace))[scope]!;
    const written = unsetPatch(before.settings, key) === undefined ? before : await patch(daemon, scope, workspace, (current) => unsetPatch(current, key) ?? {});
    const removed = written !== before;
    if (args.options.has("json")) {
      writeJson(io, { scope, file: written.file, revision: written.revision, key, removed });
      return 0;
    }
    const what = removed ? `removed ${visibleControls(key)} from` : `${visibleControls(key)} is not set in`;
    const effective = scope === "global" ? effectiveLine(written.settings, key) : undefined;
    io.stdout.write(`albedo settings unset: ${what} ${written.file} (${scope})${removed ? "" : "; nothing to remove"}\n${effective === undefined ? "" : `${effective}\n`}`);
    return 0;
  },
};

