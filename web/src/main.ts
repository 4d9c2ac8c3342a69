/** The web console: the sessions on the left, the chosen session's chat and cells on the right. */
import { h, render, type ComponentChild } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, call, messageOf, OPEN_SESSION_TIMEOUT_MS } from "./api.js";
import type { Session, SessionList } from "./generated/contract.js";
import { establishLogin, forgetLogin } from "./login.js";
import { SessionView } from "./session.js";

/** How often the session list is read again while the page is open. */
const SESSIONS_REFRESH_MS = 5_000;

type Login = "checking" | "in" | "out";

/** A closed session whose checkpoint a new session can start from (K-15). */
type Resumable = NonNullable<SessionList["resumable"]>[number];

/** How the list names who opened a session. */
const CLIENT_NAMES: Readonly<Record<Session["client"], string>> = { console: "console", chat: "chat", web: "web", notebook: "notebook", mcp: "MCP client", api: "API" };

/** A workspace as the list shows it: its last two folders, so sessions on different projects differ at a glance (the whole path is the item's title). */
function placeName(workspace: string): string {
  const parts = workspace.split("/").filter(Boolean);
  return parts.length <= 2 ? workspace : `…/${parts.slice(-2).join("/")}`;
}

/**
 * The session to show: the one chosen while it is still open; else a session this page's kind
 * opened (web), never another client's by default, whose skill switches would change that
 * client's session behind its back.
 */
function pickSession(chosen: string | undefined, list: readonly Session[]): string | undefined {
  if (chosen !== undefined && list.some((session) => session.id === chosen)) return chosen;
  return list.find((session) => session.client === "web")?.id;
}

/** What the page says when there is no login, and why when a link did not work. */
function LoggedOut({ why }: { why: string }): ComponentChild {
  return h(
    "div",
    { class: "login" },
    h("h1", null, "albedo"),
    why ? h("p", { role: "alert" }, `This login link did not work: ${why}`) : null,
    h("p", null, "You are not logged in. Run ", h("code", null, "albedo web"), " in a terminal on this machine: it opens this page with a login link that works once."),
  );
}

function Sessions({ sessions, resumable, chosen, onChoose, onChanged, onError }: {
  sessions: readonly Session[];
  resumable: readonly Resumable[];
  chosen: string | undefined;
  onChoose: (id: string) => void;
  onChanged: () => Promise<void>;
  onError: (message: string) => void;
}): ComponentChild {
  const [workspace, setWorkspace] = useState("");
  const [opening, setOpening] = useState(false);
  /** Opens a session on `place`; with `resume`, from that closed session's checkpoint. */
  const open = async (place = workspace.trim(), resume?: string) => {
    if (!place || opening) return;
    setOpening(true);
    try {
      const created = await call("openSession", { body: { workspace: place, client: "web", ...(resume !== undefined ? { resume } : {}) } }, OPEN_SESSION_TIMEOUT_MS);
      if (resume === undefined) setWorkspace("");
      await onChanged();
      onChoose(created.id);
    } catch (error) {
      onError(messageOf(error));
    } finally {
      setOpening(false);
    }
  };
  const close = async (id: string) => {
    try {
      await call("closeSession", { params: { id } });
      await onChanged();
    } catch (error) {
      onError(messageOf(error));
    }
  };
  return h(
    "nav",
    { class: "sessions", "aria-label": "Sessions" },
    h("h2", null, "Sessions"),
    h(
      "ul",
      null,
      sessions.map((session) =>
        h(
          "li",
          { key: session.id, class: session.id === chosen ? "chosen" : "", title: `${session.workspace}\nopened by ${CLIENT_NAMES[session.client]} at ${new Date(session.opened_at).toLocaleString()}` },
          h(
            "button",
            { type: "button", class: "pick", "aria-current": session.id === chosen ? "true" : undefined, onClick: () => onChoose(session.id) },
            h("span", { class: "place" }, placeName(session.workspace)),
            h("span", { class: `kind kind-${session.client}` }, CLIENT_NAMES[session.client]),
          ),
          h("button", { type: "button", class: "close", "aria-label": `Close ${session.workspace}`, onClick: () => void close(session.id) }, "Close"),
        ),
      ),
    ),
    sessions.length === 0 ? h("p", null, "No session is open.") : null,
    resumable.length === 0 ? null : h("h3", null, "Closed, with variables kept"),
    resumable.length === 0 ? null : h(
      "ul",
      { class: "resumable", "aria-label": "Closed sessions to resume" },
      resumable.map((closed) =>
        h(
          "li",
          { key: closed.id, title: `${closed.workspace}\n${closed.closed_at === null ? "its process ended without closing it" : `closed at ${new Date(closed.closed_at).toLocaleString()}`}` },
          h("span", { class: "place" }, placeName(closed.workspace)),
          h("button", { type: "button", disabled: opening, "aria-label": `Resume ${closed.workspace} (${closed.id})`, onClick: () => void open(closed.workspace, closed.id) }, "Resume"),
        ),
      ),
    ),
    h(
      "form",
      { onSubmit: (event: Event) => (event.preventDefault(), void open()) },
      h("input", { "aria-label": "Workspace", placeholder: "/path/to/workspace", value: workspace, onInput: (event: Event) => setWorkspace((event.target as HTMLInputElement).value) }),
      h("button", { type: "submit", disabled: opening || !workspace.trim() }, opening ? "Opening…" : "Open"),
    ),
  );
}

function App(): ComponentChild {
  const [login, setLogin] = useState<Login>("checking");
  const [sessions, setSessions] = useState<readonly Session[]>([]);
  const [resumable, setResumable] = useState<readonly Resumable[]>([]);
  const [chosen, setChosen] = useState<string | undefined>();
  const [error, setError] = useState("");
  const [why, setWhy] = useState("");
  const loggedOut = () => {
    setLogin("out");
    setSessions([]);
    setResumable([]);
  };
  const refresh = async () => {
    try {
      const answer = await call("listSessions", { query: { closed: "resumable" } });
      const list = answer.sessions;
      setSessions(list);
      setResumable(answer.resumable ?? []);
      setLogin("in");
      setChosen((id) => pickSession(id, list));
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 401) loggedOut();
      else setError(messageOf(caught));
    }
  };
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | undefined;
    void establishLogin(loggedOut).then((state) => {
      setWhy(state.why ?? "");
      if (state.state === "out") return loggedOut();
      if (state.why) setError(`This login link did not work: ${state.why}`);
      void refresh();
      timer = setInterval(() => void refresh(), SESSIONS_REFRESH_MS);
    });
    return () => clearInterval(timer);
  }, []);
  const logout = async () => {
    await call("webLogout").catch(() => undefined);
    forgetLogin();
    loggedOut();
  };
  if (login === "out") return h(LoggedOut, { why });
  const session = sessions.find((entry) => entry.id === chosen);
  return h(
    "div",
    { class: "app" },
    h(
      "header",
      { class: "top" },
      h("h1", null, "albedo"),
      error ? h("p", { class: "banner", role: "alert" }, error, " ", h("button", { type: "button", onClick: () => setError("") }, "Dismiss")) : null,
      h("button", { type: "button", class: "logout", onClick: () => void logout() }, "Log out"),
    ),
    h(
      "div",
      { class: "body" },
      h(Sessions, { sessions, resumable, chosen, onChoose: setChosen, onChanged: refresh, onError: setError }),
      session
        ? h(SessionView, { key: session.id, session, onError: setError })
        : h("main", { class: "empty" }, login === "checking" ? "Loading…" : sessions.length > 0 ? "Pick a session on the left, or open one on a workspace." : "Open a session on a workspace to begin."),
    ),
  );
}

render(h(App, null), document.getElementById("app")!);
