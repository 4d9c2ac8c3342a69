/**
 * The session's network panel: what its kernel may reach (off, a policy of N hosts, or open and
 * unsafe), the hosts the policy allows and denies, its latest connections, and a form that allows
 * or denies a host for the kernel's next connection, without a restart. A change is made with
 * this page's login like every other request; the daemon applies it to this session only.
 */
import { h, type ComponentChild } from "preact";
import { useEffect, useState } from "preact/hooks";
import { call, messageOf } from "./api.js";
import type { RouteTypes, Session } from "./generated/contract.js";

type Summary = Session["network"];
type NetworkRecord = RouteTypes["getNetwork"]["answer"]["records"][number];

/** The latest connections the panel lists (the CLI's `albedo network show` pages them all). */
const RECENT_CONNECTIONS = 8;

/** The `allow` and `deny` lists of a setting, and the presets it names; empty for `false` and `true`. */
function listsOf(setting: Summary["setting"]): { allow: string[]; deny: string[]; presets: string[] } {
  if (typeof setting !== "object") return { allow: [], deny: [], presets: [] };
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []);
  return { allow: strings(setting.allow), deny: strings(setting.deny), presets: strings(setting.presets) };
}

/** One connection as a line: `allowed GET pypi.org:443/simple/numpy/ · 12.1 kB`. */
function recordLine(record: NetworkRecord): string {
  const target = `${record.host}:${record.port}${record.path ?? ""}`;
  const what = record.method === null || record.method === "CONNECT" ? target : `${record.method} ${target}`;
  const why = record.decision === "allowed" ? `${record.bytes_up + record.bytes_down} bytes` : (record.reason ?? record.decision);
  return `${record.decision} ${what} · ${why}`;
}

/** The number of records the session has listed so far, as its counts say (records are numbered from 1). */
const recordsSeen = (summary: Summary) => summary.connections.allowed + summary.connections.denied + summary.connections.failed;

export function NetworkPanel({ session, onError }: { session: Session; onError: (message: string) => void }): ComponentChild {
  /** The summary a change answered with, shown until the session list is read again. */
  const [changed, setChanged] = useState<Summary | undefined>();
  const [recent, setRecent] = useState<readonly NetworkRecord[]>([]);
  const [host, setHost] = useState("");
  const [busy, setBusy] = useState(false);
  const summary = changed ?? session.network;
  const seen = recordsSeen(session.network);
  useEffect(() => setChanged(undefined), [session.network]);
  useEffect(() => {
    if (session.network.mode === "unenforced") return;
    let current = true;
    call("getNetwork", { params: { id: session.id }, query: { after: Math.max(0, seen - RECENT_CONNECTIONS), limit: RECENT_CONNECTIONS } })
      .then((answer) => current && setRecent(answer.records))
      .catch((error: unknown) => current && onError(messageOf(error)));
    return () => {
      current = false;
    };
  }, [session.id, seen]);
  const change = async (body: { allow?: string[]; deny?: string[]; reset?: boolean }) => {
    setBusy(true);
    try {
      const answer = await call("patchNetwork", { params: { id: session.id }, body });
      setChanged(answer.network);
      setHost("");
    } catch (error) {
      onError(messageOf(error));
    } finally {
      setBusy(false);
    }
  };
  const lists = listsOf(summary.setting);
  const pattern = host.trim();
  const editable = summary.mode === "off" || summary.mode === "policy";
  return h(
    "section",
    { class: "network", "aria-label": "Network" },
    h("h3", null, "Network"),
    h("p", { class: `network-mode mode-${summary.mode}`, role: "status", "aria-label": "Network policy" }, summary.text),
    summary.from === "session" ? h("p", { class: "note" }, "Changed for this session; Reset goes back to the setting it opened with.") : null,
    ...summary.diagnostics.map((line) => h("p", { class: "note" }, line)),
    lists.presets.length > 0 ? h("p", null, "Presets: ", lists.presets.join(", ")) : null,
    lists.allow.length > 0 ? h("ul", { class: "allow", "aria-label": "Allowed hosts" }, lists.allow.map((item) => h("li", { key: item }, h("code", null, item)))) : null,
    lists.deny.length > 0 ? h("ul", { class: "deny", "aria-label": "Denied hosts" }, lists.deny.map((item) => h("li", { key: item }, h("code", null, item)))) : null,
    editable
      ? h(
          "form",
          { onSubmit: (event: Event) => (event.preventDefault(), pattern && void change({ allow: [pattern] })) },
          h("input", { "aria-label": "Host pattern", placeholder: "pypi.org or *.example.com:8443", value: host, onInput: (event: Event) => setHost((event.target as HTMLInputElement).value) }),
          h("button", { type: "submit", disabled: busy || !pattern }, "Allow"),
          h("button", { type: "button", disabled: busy || !pattern, onClick: () => void change({ deny: [pattern] }) }, "Deny"),
        )
      : summary.mode === "open"
        ? h("p", { class: "note" }, "The kernel has the host's whole network; there is no list to change here.")
        : h("p", { class: "note" }, "The kernel is not sandboxed here, so it has whatever network its host has."),
    summary.from === "session" ? h("button", { type: "button", disabled: busy, onClick: () => void change({ reset: true }) }, "Reset") : null,
    recent.length > 0
      ? h("ol", { class: "connections", "aria-label": "Latest connections" }, recent.map((record) => h("li", { key: record.seq, class: `decision-${record.decision}` }, recordLine(record))))
      : null,
  );
}
