import { lstat, realpath, stat } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { AppError, isAppError } from "../../errors/index.js";
import {
  globalOnlyChanges, globalOnlyMessage, globalSettingsTarget, patchSkills, projectSettingsTarget, readSettings, updateSettings,
  type Settings, type SettingsSnapshot, type SettingsTarget,
} from "../../settings/index.js";
import { API, REPLACED_SETTINGS, type SettingsPatchBody, type SettingsDocument } from "../../api/index.js";
import type { DaemonContext } from "../context.js";
import { HttpProblem } from "../problem.js";
import type { Router, RouteRequest } from "../router.js";
import { settingsFileResource } from "../views.js";
import { ALBEDO_DIR_NAME } from "../../platform/index.js";

async function getSettings(ctx: DaemonContext, request: RouteRequest<typeof API.getSettings>) {
  const global = globalSettingsTarget(ctx.stateDir);
  const body: { -readonly [K in keyof SettingsDocument]: SettingsDocument[K] } = { global: settingsFileResource(global, await readSettings(global)) };
  const { workspace } = request.query;
  if (workspace !== undefined) {
    const project = projectSettingsTarget(resolve(workspace), ctx.stateDir);
    body.project = settingsFileResource(project, await readSettings(project));
  }
  return { status: 200 as const, body };
}

/**
 * The change a PATCH body asks for, applied to the file's settings as they are when the lock is
 * held. A project write that would set a global-only key (sandbox, network, kernel.*, …) is
 * refused: nothing would read it there. One the file already held passes untouched.
 */
function mutation(body: SettingsPatchBody): (current: Settings) => Settings {
  const apply = change(body);
  if (body.scope === "global") return apply;
  return (current) => {
    const next = apply(current);
    const refused = globalOnlyChanges(current, next);
    if (refused.length > 0) {
      const problems = refused.map((path) => ({ path, message: globalOnlyMessage(path, body.scope) }));
      throw new AppError("invalid_params", problems.map((problem) => problem.message).join("; "), { problems });
    }
    return next;
  };
}

function change(body: SettingsPatchBody): (current: Settings) => Settings {
  const { default: defaultSwitch, ...patch } = body.skills ?? {};
  return (current) => {
    const next: Record<string, unknown> = { ...patchSkills(current, patch) };
    if (defaultSwitch !== undefined) {
      const section: Record<string, unknown> = { ...(next.skills as object | undefined) };
      if (defaultSwitch === null) delete section.default;
      else section.default = defaultSwitch;
      next.skills = section;
    }
    for (const key of REPLACED_SETTINGS) {
      if (body[key] === null) delete next[key];
      else if (body[key] !== undefined) next[key] = body[key];
    }
    return next as Settings;
  };
}

/**
 * The project target of a PATCH after checking the path on disk: the workspace must be a
 * directory, and `<workspace>/.albedo`, when present, a real directory inside it. A kernel could
 * otherwise plant `.albedo -> $ALBEDO_HOME` and turn a project write into a global one. Throws
 * 400 invalid_body or 400 settings_path_unsafe.
 */
async function projectTarget(workspace: string, stateDir: string): Promise<SettingsTarget> {
  const found = await stat(workspace).catch(() => undefined);
  if (!found?.isDirectory()) throw new HttpProblem("invalid_body", `workspace ${workspace} is not a directory`, { field: "workspace" });
  const dir = join(workspace, ALBEDO_DIR_NAME);
  const entry = await lstat(dir).catch(() => undefined);
  if (entry !== undefined) {
    const unsafe = (why: string) => new HttpProblem("settings_path_unsafe", `${dir} ${why}; refusing to write project settings through it`, { field: "workspace", path: dir });
    if (entry.isSymbolicLink()) throw unsafe("is a symbolic link");
    if (!entry.isDirectory()) throw unsafe("is not a directory");
    const [realWorkspace, realDir] = await Promise.all([realpath(workspace), realpath(dir)]);
    if (!realDir.startsWith(realWorkspace.endsWith(sep) ? realWorkspace : realWorkspace + sep)) throw unsafe(`resolves to ${realDir}, outside the workspace`);
  }
  return projectSettingsTarget(workspace, stateDir);
}

async function patchSettings(ctx: DaemonContext, request: RouteRequest<typeof API.patchSettings>) {
  const body = request.body();
  const target = body.workspace === undefined ? globalSettingsTarget(ctx.stateDir) : await projectTarget(resolve(body.workspace), ctx.stateDir);
  let written: SettingsSnapshot;
  try {
    written = await updateSettings(target, mutation(body), { expectedRevision: request.ifMatch });
  } catch (error) {
    if (isAppError(error, "conflict")) {
      const current = String(error.data?.currentRevision ?? "");
      throw new HttpProblem("catalog_changed", `${target.file} is at revision ${current}, not ${request.ifMatch}; read it again`, { current_revision: current });
    }
    throw error;
  }
  await refreshSessions(ctx, target);
  return { status: 200 as const, body: settingsFileResource(target, written), headers: { etag: `"${written.revision}"` } };
}

/** Brings every live session the file speaks to up to date; a session whose other file is broken reports it on its next read. */
async function refreshSessions(ctx: DaemonContext, target: SettingsTarget): Promise<void> {
  const affected = ctx.registry.list().filter((live) => target.scope === "global" || projectSettingsTarget(live.session.workspace, ctx.stateDir).file === target.file);
  await Promise.allSettled(affected.map((live) => live.session.refresh()));
}

/** Mounts the settings routes (D-4). */
export function settingsRoutes(router: Router, ctx: DaemonContext): void {
  router.add(API.getSettings, (request) => getSettings(ctx, request)).add(API.patchSettings, (request) => patchSettings(ctx, request));
}
