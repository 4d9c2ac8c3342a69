/**
 * `albedo network show|allow|deny|reset|presets` (N-1): what a sandboxed kernel may reach. Without
 * `--session` they read and change the global `network` setting through the daemon (as `settings
 * set` does; new sessions take it); with `--session ID` they read and change that running
 * session's policy, which its kernel's next connection meets, without a restart.
 */
import { API, DaemonError, findRunningDaemon, type DaemonClient, type NetworkResource } from "../../api/index.js";
import { describeNetwork, editNetworkSetting, NetworkEditError, PRESETS, type NetworkSetting } from "../../network/index.js";
import { stateDir } from "../../platform/index.js";
import { visibleControls } from "../../text/index.js";
import { CliFailure, stringOption, UsageError, type ParsedArgs } from "../plumbing/args.js";
import { JSON_OPTION, WORKSPACE_OPTION, writeJson, type CliCommand, type CliIO } from "../plumbing/command.js";
import { daemonFor } from "../plumbing/daemonAccess.js";
import { patch, readAll } from "./settingsCommands.js";
import { workspaceOf } from "../plumbing/workspace.js";

const SESSION_OPTION = { name: "session", value: "ID", help: "a running session of the daemon (`albedo sessions` lists them); default: the global setting, for new sessions" } as const;
const OPTIONS = [SESSION_OPTION, WORKSPACE_OPTION, JSON_OPTION];

/** The running daemon holding session `id`; a session lives in a daemon, so none is started for it. */
async function daemonOfSession(io: CliIO, id: string): Promise<DaemonClient> {
  const state = stateDir(io.env);
  const daemon = await findRunningDaemon(state);
  if (daemon === undefined) throw new CliFailure(`no daemon runs for ${state}, so there is no session ${id}`);
  return daemon;
}

function refused(error: unknown): unknown {
  if (error instanceof NetworkEditError) return new UsageError(error.message);
  return error instanceof DaemonError ? new CliFailure(`the daemon refused: ${error.message} (${error.code})`) : error;
}

/** The lines that show a setting's lists. */
function settingLines(setting: NetworkSetting): string[] {
  if (typeof setting === "boolean") return [];
  const list = (name: string, items: readonly string[] | undefined) => (items && items.length > 0 ? [`  ${name}: ${items.map((item) => visibleControls(item)).join(", ")}`] : []);
  return [
    ...list("allow", setting.allow),
    ...list("deny", setting.deny),
    ...list("presets", setting.presets),
    ...list("secrets for", Object.keys(setting.secrets ?? {})),
    ...(setting.upstream_ca ? [`  upstream_ca: ${visibleControls(setting.upstream_ca)}`] : []),
  ];
}

function sessionLines(answer: NetworkResource): string[] {
  const { network } = answer;
  const counts = network.connections;
  const lines = [
    `session ${answer.session_id}: network ${network.text} (${network.from === "session" ? "changed for this session" : "the global setting"})`,
    ...settingLines(network.setting as NetworkSetting),
    ...network.diagnostics.map((note) => `  note: ${visibleControls(note)}`),
    `  connections: ${counts.allowed} allowed, ${counts.denied} denied, ${counts.failed} failed, ${counts.bytes} bytes`,
  ];
  for (const record of answer.records) {
    const what = record.decision === "allowed" ? `allowed by ${record.rule ?? "?"}` : `${record.decision}: ${record.reason ?? "?"}`;
    const target = `${record.method ?? "?"} ${record.host}:${record.port}${record.path ?? ""}`;
    lines.push(`  ${new Date(record.at).toISOString()}  ${visibleControls(target)}  ${visibleControls(what)}  ${record.bytes_up + record.bytes_down} B`);
  }
  return lines;
}

async function showSession(io: CliIO, id: string, json: boolean): Promise<number> {
  const daemon = await daemonOfSession(io, id);
  const answer = await daemon.call(API.getNetwork, { params: { id } }).catch((error: unknown) => Promise.reject(refused(error)));
  if (json) writeJson(io, answer);
  else io.stdout.write(`${sessionLines(answer).join("\n")}\n`);
  return 0;
}

async function changeSession(io: CliIO, id: string, body: { allow?: string[]; deny?: string[]; reset?: boolean }, json: boolean): Promise<number> {
  const daemon = await daemonOfSession(io, id);
  const answer = await daemon.call(API.patchNetwork, { params: { id }, body }).catch((error: unknown) => Promise.reject(refused(error)));
  if (json) writeJson(io, answer);
  else io.stdout.write(`session ${id}: network ${answer.network.text}, from its next connection\n${settingLines(answer.network.setting as NetworkSetting).join("\n")}\n`);
  return 0;
}

async function globalSetting(args: ParsedArgs, io: CliIO, who: string): Promise<{ daemon: DaemonClient; workspace: string; setting: NetworkSetting; file: string }> {
  const workspace = await workspaceOf(args, io);
  const daemon = await daemonFor(io, who);
  const answer = await readAll(daemon, workspace);
  return { daemon, workspace, setting: answer.global.settings.network ?? false, file: answer.global.file };
}

async function changeGlobal(args: ParsedArgs, io: CliIO, who: string, change: (setting: NetworkSetting) => NetworkSetting): Promise<number> {
  const { daemon, workspace } = await globalSetting(args, io, who);
  let next: NetworkSetting = false;
  const written = await patch(daemon, "global", workspace, (current) => {
    next = change(current.network ?? false);
    return { network: next };
  }).catch((error: unknown) => Promise.reject(refused(error)));
  if (args.options.has("json")) writeJson(io, { scope: "global", file: written.file, revision: written.revision, network: next });
  else io.stdout.write(`${who}: network is ${describeNetwork(next)} in ${written.file} (global; new sessions take it, a running one with --session)\n${settingLines(next).join("\n")}\n`);
  return 0;
}

function patterns(args: ParsedArgs): string[] {
  if (args.positionals.length === 0) throw new UsageError("name at least one PATTERN: a host (pypi.org), *.domain, or an IP address, each with an optional :PORT");
  return [...args.positionals];
}

function editCommand(verb: "allow" | "deny"): CliCommand {
  const who = `albedo network ${verb}`;
  return {
    options: OPTIONS,
    async run(args, io) {
      const given = patterns(args);
      const session = stringOption(args, "session");
      // Checked here first, so a bad pattern is a usage error before any daemon is asked.
      try {
        editNetworkSetting(false, { [verb]: given });
      } catch (error) {
        throw refused(error);
      }
      if (session !== undefined) return changeSession(io, session, { [verb]: given }, args.options.has("json"));
      return changeGlobal(args, io, who, (setting) => {
        try {
          return editNetworkSetting(setting, { [verb]: given });
        } catch (error) {
          throw refused(error);
        }
      });
    },
  };
}

export const networkAllow = editCommand("allow");
export const networkDeny = editCommand("deny");

export const networkReset: CliCommand = {
  options: OPTIONS,
  async run(args, io) {
    if (args.positionals.length > 0) throw new UsageError(`reset takes no PATTERN, got ${args.positionals.join(" ")}`);
    const session = stringOption(args, "session");
    if (session !== undefined) return changeSession(io, session, { reset: true }, args.options.has("json"));
    return changeGlobal(args, io, "albedo network reset", () => false);
  },
};

export const networkShow: CliCommand = {
  options: OPTIONS,
  async run(args, io) {
    if (args.positionals.length > 0) throw new UsageError(`show takes no argument, got ${args.positionals.join(" ")}`);
    const session = stringOption(args, "session");
    if (session !== undefined) return showSession(io, session, args.options.has("json"));
    const { setting, file } = await globalSetting(args, io, "albedo network show");
    if (args.options.has("json")) writeJson(io, { scope: "global", file, network: setting, text: describeNetwork(setting) });
    else io.stdout.write(`network: ${describeNetwork(setting)} (global, ${file}; new sessions take it)\n${[...settingLines(setting), ""].join("\n")}`);
    return 0;
  },
};

export const networkPresets: CliCommand = {
  options: [JSON_OPTION],
  async run(args, io) {
    if (args.options.has("json")) writeJson(io, PRESETS.map((preset) => ({ name: preset.name, patterns: preset.patterns })));
    else io.stdout.write(`${PRESETS.map((preset) => `${preset.name}: ${preset.patterns.join(", ")}`).join("\n")}\n`);
    return 0;
  },
};
