/** `albedo sessions`: the sessions the daemon for the state dir holds, whoever opened them; with --resumable, the closed ones a resume starts from. */
import { API, findRunningDaemon, type ResumableSessionResource, type SessionResource } from "../../api/index.js";
import { listResumable } from "../../session/index.js";
import { table, textColumns, visibleControls } from "../../text/index.js";
import { JSON_OPTION, writeJson, type CliCommand, type CliIO } from "../plumbing/command.js";
import { formatUptime } from "./daemonCommands.js";
import { stateDir } from "../../platform/index.js";

const HEADER = ["ID", "CLIENT", "KERNEL", "AGE", "WORKSPACE"] as const;

/** One session as `--json` lists it: what tells sessions apart, and its age in whole seconds. */
function row(session: SessionResource, now: number) {
  return {
    id: session.id,
    workspace: session.workspace,
    client: session.client,
    kernel: session.kernel.status,
    opened_at: session.opened_at,
    age_s: Math.max(0, Math.round((now - Date.parse(session.opened_at)) / 1000)),
  };
}

/** The table for `columns`; a workspace too long for its column keeps its end, where paths differ. */
function sessionTable(rows: readonly ReturnType<typeof row>[], columns: number): string[] {
  const cells = rows.map((r) => [r.id, r.client, r.kernel, formatUptime(r.age_s * 1000), visibleControls(r.workspace)]);
  const fixed = HEADER.slice(0, -1).reduce((sum, title, i) => sum + Math.max(title.length, ...cells.map((c) => c[i]!.length)) + 2, 0);
  const room = Math.max(10, columns - fixed);
  return table(HEADER, cells.map((c) => [...c.slice(0, -1), keepEnd(c.at(-1)!, room)]), columns);
}

function keepEnd(text: string, width: number): string {
  return text.length <= width ? text : `…${text.slice(text.length - width + 1)}`;
}

async function list(json: boolean, io: CliIO): Promise<number> {
  const state = stateDir(io.env);
  const daemon = await findRunningDaemon(state);
  if (daemon === undefined) {
    if (json) writeJson(io, { daemon: null, state_dir: state, sessions: [] });
    else io.stdout.write(`no daemon runs for ${state}, so no sessions are open (a console or chat without a daemon runs its session inside itself; \`albedo serve\` starts a daemon)\n`);
    return 0;
  }
  const { sessions } = await daemon.call(API.listSessions);
  const now = Date.now();
  const rows = sessions.map((session) => row(session, now));
  if (json) {
    writeJson(io, { daemon: daemon.info.url, state_dir: state, sessions: rows });
    return 0;
  }
  const where = `the daemon at ${daemon.info.url}`;
  const lines = rows.length === 0 ? [`no sessions are open on ${where}`] : [...sessionTable(rows, textColumns(io.stdout.columns)), "", `${rows.length} on ${where}`];
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

const RESUMABLE_HEADER = ["ID", "CLOSED", "CHECKPOINTED", "WORKSPACE"] as const;

/**
 * The closed sessions whose checkpoint `--resume ID` starts from: the daemon's list when one runs
 * (it owns the state dir), else read from the state dir here (records and file times, never a value).
 */
async function resumable(json: boolean, io: CliIO): Promise<number> {
  const state = stateDir(io.env);
  const daemon = await findRunningDaemon(state);
  const rows: readonly ResumableSessionResource[] = daemon !== undefined
    ? ((await daemon.call(API.listSessions, { query: { closed: "resumable" } })).resumable ?? [])
    : (await listResumable(state)).map((s) => ({ id: s.id, workspace: s.workspace, closed_at: s.closedAt, checkpointed_at: s.checkpointedAt }));
  if (json) {
    writeJson(io, { state_dir: state, resumable: rows });
    return 0;
  }
  if (rows.length === 0) {
    io.stdout.write(`no closed session in ${state} has a checkpoint to resume\n`);
    return 0;
  }
  const now = Date.now();
  const ago = (at: string | null) => (at === null ? "not closed (its process died)" : `${formatUptime(now - Date.parse(at))} ago`);
  const cells = rows.map((r) => [r.id, ago(r.closed_at), ago(r.checkpointed_at), visibleControls(r.workspace)]);
  const lines = [...table(RESUMABLE_HEADER, cells, textColumns(io.stdout.columns)), "", "resume one with `albedo console --resume ID` (in its workspace)"];
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

export const sessionsCommand: CliCommand = {
  options: [JSON_OPTION, { name: "resumable", help: "list the closed sessions whose checkpoint can be resumed (`--resume ID`) instead of the open ones" }],
  run: (args, io) => (args.options.has("resumable") ? resumable(args.options.has("json"), io) : list(args.options.has("json"), io)),
};
