import { lstat, realpath, stat } from "node:fs/promises";
import { isAbsolute, join, resolve, sep } from "node:path";
import { isAppError } from "../../errors/index.js";
import {
  globalSettingsTarget, patchSkills, projectSettingsTarget, readSettings, updateSettings,
  type Settings, type SettingsSnapshot, type SettingsTarget,
} from "../../settings/index.js";
import type { DaemonContext } from "../context.js";
import { HttpProblem } from "../problem.js";
import type { Router, RouteRequest } from "../router.js";
import { absolutePathField, ifMatchRevision, objectBody, type JsonObject } from "../validate.js";
import { skillsPatchOf } from "./catalog.js";

/** Top-level settings fields PATCH /settings replaces whole (null removes one). */
const REPLACED_FIELDS = ["sandbox", "network", "kernel", "limits", "model"] as const;

function scopeView(target: SettingsTarget, snapshot: SettingsSnapshot) {
  return { scope: target.scope, file: target.file, revision: snapshot.revision, settings: snapshot.settings };
}

async function getSettings(ctx: DaemonContext, request: RouteRequest) {
  const workspace = request.url.searchParams.get("workspace");
  if (workspace !== null && !isAbsolute(workspace)) throw new HttpProblem("invalid_params", "?workspace= must be an absolute path");
  const global = globalSettingsTarget(ctx.stateDir);
  const body: Record<string, unknown> = { global: scopeView(global, await readSettings(global)) };
  if (workspace !== null) {
    const project = projectSettingsTarget(resolve(workspace), ctx.stateDir);
    body.project = scopeView(project, await readSettings(project));
  }
  return { status: 200, body };
}

/** Builds the change a PATCH body asks for; throws 400 invalid_body before any file is touched. */
function mutation(body: JsonObject, scope: "global" | "project"): (current: Settings) => Settings {
  const skills = body.skills === undefined ? {} : objectBody(body.skills, [], ["on", "off", "clear", "default"], "skills");
  const patch = skillsPatchOf(skills, "skills");
  const defaultSwitch = skills.default;
  if (defaultSwitch !== undefined && scope !== "global") throw new HttpProblem("invalid_body", "skills.default exists only in the global scope", { field: "skills.default" });
  if (defaultSwitch !== undefined && defaultSwitch !== null && defaultSwitch !== "on" && defaultSwitch !== "off") {
    throw new HttpProblem("invalid_body", 'skills.default must be "on", "off" or null', { field: "skills.default" });
  }
  return (current) => {
    const next: Record<string, unknown> = { ...patchSkills(current, patch) };
    if (defaultSwitch !== undefined) {
      const section: Record<string, unknown> = { ...(next.skills as object | undefined) };
      if (defaultSwitch === null) delete section.default;
      else section.default = defaultSwitch;
      next.skills = section;
    }
    for (const key of REPLACED_FIELDS) {
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
  const dir = join(workspace, ".albedo");
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

async function patchSettings(ctx: DaemonContext, request: RouteRequest) {
  const expected = ifMatchRevision(request.req);
  const body = objectBody(await request.body(), ["scope"], ["workspace", "skills", ...REPLACED_FIELDS]);
  const scope = body.scope;
  if (scope !== "global" && scope !== "project") throw new HttpProblem("invalid_body", 'scope must be "global" or "project"', { field: "scope" });
  const workspace = absolutePathField(body, "workspace");
  if (scope === "project" && workspace === undefined) throw new HttpProblem("invalid_body", "a project scope needs workspace", { field: "workspace" });
  if (scope === "global" && workspace !== undefined) throw new HttpProblem("invalid_body", "the global scope takes no workspace", { field: "workspace" });
  const target = scope === "global" ? globalSettingsTarget(ctx.stateDir) : await projectTarget(resolve(workspace!), ctx.stateDir);
  let written: SettingsSnapshot;
  try {
    written = await updateSettings(target, mutation(body, scope), { expectedRevision: expected });
  } catch (error) {
    if (isAppError(error, "conflict")) {
      const current = String(error.data?.currentRevision ?? "");
      throw new HttpProblem("catalog_changed", `${target.file} is at revision ${current}, not ${expected}; read it again`, { current_revision: current });
    }
    throw error;
  }
  await refreshSessions(ctx, target);
  return { status: 200, body: scopeView(target, written), headers: { etag: `"${written.revision}"` } };
}

/** Brings every live session the file speaks to up to date; a session whose other file is broken reports it on its next read. */
async function refreshSessions(ctx: DaemonContext, target: SettingsTarget): Promise<void> {
  const affected = ctx.registry.list().filter((live) => target.scope === "global" || projectSettingsTarget(live.session.workspace, ctx.stateDir).file === target.file);
  await Promise.allSettled(affected.map((live) => live.session.refresh()));
}

/** Mounts the settings routes (D-4). */
export function settingsRoutes(router: Router, ctx: DaemonContext): void {
  router.add("GET", "/settings", (request) => getSettings(ctx, request)).add("PATCH", "/settings", (request) => patchSettings(ctx, request));
}
