/**
 * The side panels of a session: the management catalog's skills with an on/off switch per skill
 * and scope (session, project, global), and the session's MCP servers. A write names the revision
 * the page last read (If-Match); when someone changed the catalog or the settings file meanwhile
 * the daemon answers 409, and the panel reads everything again and says why.
 */
import { h, type ComponentChild } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, call, messageOf } from "./api.js";
import type { Catalog, Session, SettingsDocument, SettingsPatchBody } from "./generated/contract.js";

type Skill = Catalog["skills"][number];

/** Where a switch writes: the session's overrides, or a settings file. */
type Scope = "session" | SettingsPatchBody["scope"];
const SCOPES: readonly Scope[] = ["session", "project", "global"];

/** The session's MCP servers as the session resource reports them (read again with the session list). */
export function McpPanel({ session }: { session: Session }): ComponentChild {
  const { servers } = session.composition.extensions.mcp;
  return h(
    "section",
    { class: "mcp", "aria-label": "MCP servers" },
    h("h3", null, "MCP servers"),
    servers.length === 0
      ? h("p", null, "No MCP servers are configured (add one with ", h("code", null, "albedo mcp add"), ").")
      : h(
          "ul",
          null,
          servers.map((server) =>
            h(
              "li",
              { key: server.name, class: server.status },
              h("b", null, server.name),
              ` · ${server.status}${server.status === "running" ? ` · ${server.tools} tools` : ""} · ${server.origin}`,
              ...server.diagnostics.map((line) => h("p", { class: "note" }, line)),
            ),
          ),
        ),
  );
}

export function SkillsPanel({ session, reloads, onError }: { session: Session; reloads: number; onError: (message: string) => void }): ComponentChild {
  const [catalog, setCatalog] = useState<Catalog | undefined>();
  const [settings, setSettings] = useState<SettingsDocument | undefined>();
  const [note, setNote] = useState("");
  const load = async () => {
    try {
      const [read, files] = await Promise.all([
        call("getCatalog", { params: { id: session.id } }),
        call("getSettings", { query: { workspace: session.workspace } }),
      ]);
      setCatalog(read);
      setSettings(files);
    } catch (error) {
      onError(messageOf(error));
    }
  };
  useEffect(() => void load(), [session.id, reloads]);
  const write = async (skill: Skill, scope: Scope, on: boolean): Promise<void> => {
    const key = skill.preference_key!;
    const change = on ? { on: [key] } : { off: [key] };
    if (scope === "session") {
      setCatalog(await call("patchCatalog", { params: { id: session.id }, body: change, ifMatch: catalog!.revision }));
      return;
    }
    const file = scope === "global" ? settings!.global : settings!.project;
    const body = { scope, ...(scope === "project" ? { workspace: session.workspace } : {}), skills: change };
    await call("patchSettings", { body, ifMatch: file?.revision ?? "absent" });
    await load();
  };
  const toggle = async (skill: Skill, scope: Scope, on: boolean) => {
    if (catalog === undefined || settings === undefined || skill.preference_key === null) return;
    try {
      await write(skill, scope, on);
      const where = scope === "session" ? "for this session" : scope === "project" ? "for this project" : "for every workspace";
      setNote(`${skill.name} is ${on ? "on" : "off"} ${where} from the next turn.`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        setNote(`The skills changed since this list was read (${error.message}); here they are again: switch once more if you still want to.`);
        await load();
      } else onError(messageOf(error));
    }
  };
  const preference = (skill: Skill, scope: Scope) => (scope === "session" ? skill.session_override : scope === "project" ? skill.project_preference : skill.global_preference);
  return h(
    "section",
    { class: "skills", "aria-label": "Skills" },
    h("h3", null, "Skills"),
    note ? h("p", { class: "note", role: "status" }, note) : null,
    catalog === undefined
      ? h("p", null, "Reading the skills…")
      : catalog.skills.length === 0
        ? h("p", null, "No skills were found for this workspace.")
        : h(
            "ul",
            null,
            catalog.skills.map((skill) =>
              h(
                "li",
                { key: skill.id, class: skill.status },
                h("b", null, skill.name),
                h("small", null, ` ${skill.status === "valid" ? `${skill.effective.enabled ? "on" : "off"}, decided by ${skill.effective.decided_by}` : skill.status}`),
                h(
                  "div",
                  { class: "switches" },
                  SCOPES.map((scope) => {
                    // The session switch shows what the session gets; a settings scope's shows what that file says (unset: off, "not set").
                    const said = preference(skill, scope);
                    const checked = scope === "session" ? skill.effective.enabled : said === "on";
                    return h(
                      "label",
                      { key: scope },
                      h("input", {
                        type: "checkbox",
                        role: "switch",
                        "aria-label": `${skill.name} (${scope})`,
                        checked,
                        disabled: skill.preference_key === null || skill.status !== "valid",
                        onChange: (event: Event) => void toggle(skill, scope, (event.target as HTMLInputElement).checked),
                      }),
                      ` ${scope}${scope !== "session" && said === null ? " (not set)" : ""}`,
                    );
                  }),
                ),
                skill.description ? h("p", { class: "description" }, skill.description) : null,
              ),
            ),
          ),
  );
}
