/** One session's chat: the live transcript, the Message box with slash completion, Send, Interrupt, Reload, and the Python box. */
import { h, type ComponentChild } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { call, EXECUTE_TIMEOUT_MS, messageOf, pathOf, type Command, type Entry } from "./api.js";
import { MAX_TRANSCRIPT_PAGE_ROWS, type EventBody, type ExecuteAnswer, type Output, type Session, type StreamMessage, type TranscriptRow } from "./generated/contract.js";
import { imageView, rowView } from "./rows.js";
import { NetworkPanel } from "./network.js";
import { McpPanel, SkillsPanel } from "./panels.js";
import { streamProtocols } from "./login.js";

/** Rows kept on the page; the oldest go first. */
const MAX_SHOWN_ROWS = 2_000;
/** Completions listed under the Message box. */
const MAX_COMPLETIONS = 8;
/** Network denial lines shown under the session's head; the oldest go first. */
const MAX_SHOWN_DENIALS = 5;
/** Wait before the stream is opened again after it dropped. */
const STREAM_RETRY_MS = 1_000;

interface Props {
  readonly session: Session;
  readonly onError: (message: string) => void;
}

/** A kernel output as the stream carries it, tagged with the execution it belongs to. */
type StreamOutput = Extract<StreamMessage, { readonly type: "output" }>;

/** Who hears the stream's outputs, by execution id: the Python box's running cell. */
type OutputListeners = Map<string, (output: StreamOutput) => void>;

/** A denial line as the stream said it, numbered for its key. */
interface Denial {
  readonly key: number;
  readonly text: string;
}

interface Transcript {
  readonly rows: Entry[];
  readonly streaming: Map<string, string>;
  readonly kernel: string;
  readonly restore: string | undefined;
  readonly connected: boolean;
  /** The newest connections the kernel's proxy refused, as they happened (N-4). */
  readonly denials: readonly Denial[];
}

function useTranscript(session: Session, onError: (message: string) => void, listeners: OutputListeners): Transcript {
  const { id } = session;
  // The kernel's last restore from its checkpoint (K-15): a resume's from the resource, a later one from the stream's status.
  const [restore, setRestore] = useState(session.kernel.restore?.summary);
  const [rows, setRows] = useState<Entry[]>([]);
  const [streaming, setStreaming] = useState(new Map<string, string>());
  const [kernel, setKernel] = useState("unknown");
  const [connected, setConnected] = useState(false);
  const [denials, setDenials] = useState<readonly Denial[]>([]);
  useEffect(() => {
    let closed = false;
    let denied = 0;
    let ws: WebSocket | undefined;
    let lastSeq = 0;
    const turnsWithRows = new Set<string>();
    const add = (incoming: readonly TranscriptRow[]) => {
      const fresh = incoming.filter((row) => row.seq > lastSeq);
      if (fresh.length === 0) return;
      lastSeq = fresh[fresh.length - 1]!.seq;
      for (const row of fresh) turnsWithRows.add(row.turn_id);
      setRows((old) => [...old, ...fresh].slice(-MAX_SHOWN_ROWS));
      const ended = fresh.filter((row) => row.kind === "assistant").map((row) => row.turn_id);
      if (ended.length > 0) setStreaming((old) => new Map([...old].filter(([turn]) => !ended.includes(turn))));
    };
    const open = () => {
      const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${pathOf("stream", { id })}`;
      ws = new WebSocket(url, streamProtocols());
      ws.onopen = async () => {
        setConnected(true);
        // Rows written while the stream was down come from the transcript; the seq keeps each once.
        try {
          const page = await call("getTranscript", { params: { id }, query: { after: lastSeq, limit: MAX_TRANSCRIPT_PAGE_ROWS } });
          add(page.rows);
        } catch (error) {
          onError(messageOf(error));
        }
      };
      ws.onmessage = (event) => {
        const message = JSON.parse(String(event.data)) as StreamMessage;
        if (message.type === "row") add([message.row]);
        else if (message.type === "output") listeners.get(message.execution_id)?.(message);
        else if (message.type === "text") setStreaming((old) => new Map(old).set(message.turn_id, (old.get(message.turn_id) ?? "") + message.delta));
        else if (message.type === "network") {
          const denial = { key: ++denied, text: message.text };
          setDenials((old) => [...old, denial].slice(-MAX_SHOWN_DENIALS));
        } else if (message.type === "status") {
          setKernel(message.kernel.status);
          if (message.kernel.restore !== null) setRestore(message.kernel.restore.summary);
        }
        else if (message.type === "transcript" && message.turn.outcome !== null) {
          // A turn that ended without its assistant row (interrupted, failed) leaves no streaming text behind.
          const ended = message.turn.turn_id;
          setStreaming((old) => (old.has(ended) ? new Map([...old].filter(([turn]) => turn !== ended)) : old));
        }
        if (message.type === "transcript" && message.turn.outcome?.state === "committed" && !turnsWithRows.has(message.turn.turn_id)) {
          // A built-in (/help, /status) writes no rows: its answer is shown here, as the console prints it.
          const { turn } = message;
          const { reply } = message.turn.outcome;
          setRows((old) => [...old, { kind: "command" as const, turn_id: turn.turn_id, seq: lastSeq, visible_text: turn.visible_text, reply }].slice(-MAX_SHOWN_ROWS));
        }
      };
      ws.onclose = () => {
        setConnected(false);
        if (!closed) setTimeout(() => !closed && open(), STREAM_RETRY_MS);
      };
    };
    open();
    return () => {
      closed = true;
      ws?.close();
    };
  }, [id]);
  return { rows, streaming, kernel, restore, connected, denials };
}

function completionsFor(text: string, commands: readonly Command[]): Command[] {
  const match = /^\/(\S*)$/.exec(text);
  if (match === null) return [];
  return commands.filter((command) => command.callers.includes("user") && command.name.startsWith(`/${match[1]}`)).slice(0, MAX_COMPLETIONS);
}

function MessageBox({ session, onError }: Props): ComponentChild {
  const [text, setText] = useState("");
  const [chosen, setChosen] = useState(0);
  const [sending, setSending] = useState(false);
  const options = useMemo(() => completionsFor(text, session.commands), [text, session.commands]);
  const send = async () => {
    const typed = text.trim();
    if (!typed || sending) return;
    setSending(true);
    try {
      const slash = /^(\/\S+)(?:\s+([\s\S]*))?$/.exec(typed);
      const body: EventBody = slash ? { type: "command", command: slash[1]!, arguments: slash[2] ?? "" } : { type: "message", text: typed };
      await call("postEvent", { params: { id: session.id }, body });
      setText("");
    } catch (error) {
      onError(messageOf(error));
    } finally {
      setSending(false);
    }
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (options.length > 0 && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      setChosen((index) => (index + (event.key === "ArrowDown" ? 1 : options.length - 1)) % options.length);
    } else if (options.length > 0 && event.key === "Tab") {
      event.preventDefault();
      setText(`${options[Math.min(chosen, options.length - 1)]!.name} `);
      setChosen(0);
    } else if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      void send();
    }
  };
  return h(
    "form",
    { class: "message", onSubmit: (event: Event) => (event.preventDefault(), void send()) },
    h("textarea", {
      "aria-label": "Message",
      placeholder: "Message the model, or type / for commands (Enter sends, Shift+Enter is a new line)",
      rows: 3,
      value: text,
      onInput: (event: Event) => (setText((event.target as HTMLTextAreaElement).value), setChosen(0)),
      onKeyDown,
      "aria-autocomplete": "list",
      "aria-controls": "completions",
    }),
    options.length > 0
      ? h(
          "ul",
          { id: "completions", role: "listbox", "aria-label": "Commands" },
          options.map((command, index) =>
            h(
              "li",
              { role: "option", "aria-selected": index === chosen, onMouseDown: (event: Event) => (event.preventDefault(), setText(`${command.name} `)) },
              h("b", null, command.name),
              ` ${command.description}`,
            ),
          ),
        )
      : null,
    h("button", { type: "submit", disabled: sending || !text.trim() }, "Send"),
  );
}

/** Cells the Python box keeps; the oldest go first. */
const MAX_SHOWN_CELLS = 50;

/** One cell of the Python box: its code, the outputs streamed while it runs, then the daemon's answer. */
interface Cell {
  readonly id: string;
  readonly code: string;
  readonly live: readonly StreamOutput[];
  readonly answer?: ExecuteAnswer;
}

function PythonBox({ session, onError, listeners }: Props & { listeners: OutputListeners }): ComponentChild {
  const [code, setCode] = useState("");
  const [running, setRunning] = useState(false);
  const [cells, setCells] = useState<readonly Cell[]>([]);
  const update = (id: string, change: (cell: Cell) => Cell) => setCells((old) => old.map((cell) => (cell.id === id ? change(cell) : cell)));
  const run = async () => {
    if (!code.trim() || running) return;
    const id = crypto.randomUUID();
    setCells((old) => [...old, { id, code, live: [] }].slice(-MAX_SHOWN_CELLS));
    listeners.set(id, (output) => update(id, (cell) => ({ ...cell, live: [...cell.live, output] })));
    setRunning(true);
    try {
      const answer = await call("execute", { params: { id: session.id }, body: { code, execution_id: id } }, EXECUTE_TIMEOUT_MS);
      update(id, (cell) => ({ ...cell, answer }));
    } catch (error) {
      onError(messageOf(error));
    } finally {
      listeners.delete(id);
      setRunning(false);
    }
  };
  return h(
    "section",
    { class: "python", "aria-label": "Python cell" },
    h("ol", { class: "cells" }, cells.map((cell, index) => cellView(cell, index === cells.length - 1))),
    h("textarea", {
      "aria-label": "Python",
      placeholder: "Python to run in the session's kernel (Ctrl+Enter runs)",
      rows: 6,
      spellcheck: false,
      value: code,
      onInput: (event: Event) => setCode((event.target as HTMLTextAreaElement).value),
      onKeyDown: (event: KeyboardEvent) => event.key === "Enter" && (event.ctrlKey || event.metaKey) && (event.preventDefault(), void run()),
    }),
    h("button", { type: "button", onClick: () => void run(), disabled: running || !code.trim() }, running ? "Running…" : "Run"),
  );
}

/** One cell: its code, then its outputs, live while it runs; the newest is the "Python result". */
function cellView(cell: Cell, newest: boolean): ComponentChild {
  const { answer } = cell;
  const status = answer?.status ?? "running";
  return h(
    "li",
    { key: cell.id, class: `cell ${status}` },
    h("pre", { class: "code" }, cell.code),
    h(
      "div",
      { class: `result ${status}`, "aria-live": newest ? "polite" : undefined, "aria-label": newest ? "Python result" : "Earlier cell" },
      outputText(answer?.outputs ?? cell.live, answer === undefined ? "running…" : `no output · ${answer.status}`),
      ...(answer?.images ?? []).map(imageView),
      ...(answer?.image_notes ?? []).map((note) => h("p", { class: "note" }, note)),
    ),
  );
}

/** Outputs as text: streams, plain-text results, tracebacks (their escapes dropped); `empty` when there is none. */
function outputText(outputs: readonly Output[], empty: string): ComponentChild {
  const parts: string[] = [];
  for (const { msg_type, content } of outputs) {
    if (msg_type === "stream") parts.push(String(content.text ?? ""));
    else if (msg_type === "execute_result" || msg_type === "display_data") {
      const data = (content.data ?? {}) as Record<string, unknown>;
      const html = typeof data["text/html"] === "string" ? " (an HTML output: shown as its text)" : "";
      if (typeof data["text/plain"] === "string") parts.push(`${data["text/plain"]}${html}\n`);
    } else if (msg_type === "error") parts.push(`${((content.traceback ?? []) as string[]).join("\n").replace(/\u001b\[[0-9;]*m/g, "")}\n`);
  }
  return h("pre", { class: "output" }, parts.join("") || `(${empty})`);
}

export function SessionView({ session, onError }: Props): ComponentChild {
  const listeners = useMemo<OutputListeners>(() => new Map(), [session.id]);
  const { rows, streaming, kernel, restore, connected, denials } = useTranscript(session, onError, listeners);
  const transcript = useRef<HTMLDivElement>(null);
  // Only the transcript scrolls to its end; scrolling an element into view would move the whole page too.
  useEffect(() => {
    const box = transcript.current;
    if (box) box.scrollTop = box.scrollHeight;
  }, [rows.length, streaming]);
  const [said, setSaid] = useState("");
  /** Counts reloads, so the skills panel reads the catalog again after one. */
  const [reloads, setReloads] = useState(0);
  const interrupt = async () => {
    try {
      await call("interrupt", { params: { id: session.id } });
    } catch (error) {
      onError(messageOf(error));
    }
  };
  const reload = async () => {
    try {
      const body = await call("reload", { params: { id: session.id } });
      const changes = [
        body.added.length > 0 ? `added ${body.added.join(", ")}` : "",
        body.removed.length > 0 ? `removed ${body.removed.join(", ")}` : "",
        ...body.failed.map((skill) => `${skill.name} did not load: ${skill.message}`),
      ].filter(Boolean);
      setSaid(`Reloaded: ${body.skills} skills${changes.length > 0 ? `; ${changes.join("; ")}` : ", nothing changed"}.`);
      setReloads((count) => count + 1);
    } catch (error) {
      onError(messageOf(error));
    }
  };
  return h(
    "main",
    { class: "session", "aria-label": `Session ${session.id}` },
    h(
      "header",
      { class: "session-head" },
      h("h2", { title: session.workspace }, session.workspace),
      session.client === "web" ? null : h("span", { class: "note" }, `opened by ${session.client === "mcp" ? "an MCP client" : `a ${session.client}`}: what you change here changes that session`),
      h("span", { class: `status ${connected ? "" : "offline"}`, role: "status" }, connected ? `kernel ${kernel}` : "reconnecting…"),
      h("button", { type: "button", onClick: () => void interrupt() }, "Interrupt"),
      h("button", { type: "button", onClick: () => void reload() }, "Reload"),
      said ? h("span", { class: "note", role: "status", "aria-label": "Reload result" }, said) : null,
      restore ? h("span", { class: "note", role: "status", "aria-label": "Restore" }, `kernel restored from its checkpoint: ${restore}`) : null,
    ),
    denials.length === 0 ? null : h("ul", { class: "denials", role: "log", "aria-label": "Network denials", "aria-live": "polite" }, denials.map((denial) => h("li", { key: denial.key }, denial.text))),
    h(
      "div",
      { class: "columns" },
      h(
        "section",
        { class: "chat", "aria-label": "Chat" },
        h(
          "div",
          { class: "transcript", role: "log", "aria-label": "Transcript", "aria-live": "polite", ref: transcript },
          rows.map(rowView),
          [...streaming].map(([turn, text]) => h("div", { class: "row row-assistant streaming", key: `s-${turn}`, "data-kind": "streaming" }, h("span", { class: "who" }, "model"), h("p", { class: "text" }, text))),
        ),
        h(MessageBox, { session, onError }),
      ),
      h("aside", { class: "side" }, h(PythonBox, { session, onError, listeners }), h(SkillsPanel, { session, reloads, onError }), h(McpPanel, { session }), h(NetworkPanel, { session, onError })),
    ),
  );
}
