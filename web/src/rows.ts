/** One transcript row as the page shows it: every piece of model, kernel and skill text is a text node, never HTML. */
import { h, type ComponentChild } from "preact";
import { useEffect, useState } from "preact/hooks";
import { apiBlob, type CommandEntry, type Entry } from "./api.js";
import type { Image } from "./generated/contract.js";

const kb = (bytes: number): string => (bytes < 1024 ? `${bytes} B` : `${Math.round(bytes / 1024)} KB`);

/** An image of the API: fetched with the page's login (an img element would send the cookie alone) and shown from a blob URL. */
function ApiImage({ image, label }: { image: Image; label: string }): ComponentChild {
  const [src, setSrc] = useState<string | undefined>();
  const [failed, setFailed] = useState("");
  useEffect(() => {
    let url: string | undefined;
    let gone = false;
    apiBlob(image.url).then(
      (blob) => {
        if (gone) return;
        url = URL.createObjectURL(blob);
        setSrc(url);
      },
      (error: unknown) => !gone && setFailed(error instanceof Error ? error.message : String(error)),
    );
    return () => {
      gone = true;
      if (url !== undefined) URL.revokeObjectURL(url);
    };
  }, [image.url]);
  if (failed) return h("p", { class: "note" }, `(${label} could not be loaded: ${failed})`);
  return h("img", { src, alt: label, width: image.width, height: image.height });
}

export function imageView(image: Image, index: number): ComponentChild {
  const label = `image ${index + 1} · ${image.width}×${image.height} ${image.mime.replace("image/", "").toUpperCase()} · ${kb(image.bytes)}`;
  return h("figure", { class: "image" }, h(ApiImage, { image, label }), h("figcaption", null, label));
}

/** A built-in's reply as text: a command list one per line, a string as it is, anything else as indented JSON. */
export function replyText(reply: unknown): string {
  if (typeof reply === "string") return reply;
  const commands = (reply as { commands?: unknown } | null)?.commands;
  if (Array.isArray(commands)) {
    return commands.map((command: { usage?: unknown; name?: unknown; description?: unknown }) => `${String(command.usage ?? command.name ?? "")}  ${String(command.description ?? "")}`).join("\n");
  }
  return JSON.stringify(reply, null, 2);
}

function commandView(entry: CommandEntry): ComponentChild {
  return h(
    "div",
    { class: "row row-command", "data-kind": "command" },
    h("span", { class: "who" }, "you"),
    h("p", { class: "text" }, entry.visible_text),
    h("pre", { class: "output" }, replyText(entry.reply)),
  );
}

export function rowView(row: Entry): ComponentChild {
  if (row.kind === "command") return commandView(row);
  const base = { class: `row row-${row.kind}`, "data-seq": row.seq, "data-kind": row.kind };
  switch (row.kind) {
    case "user":
      return h("div", base, h("span", { class: "who" }, "you"), h("p", { class: "text" }, row.text));
    case "assistant":
      return h("div", base, h("span", { class: "who" }, "model"), h("p", { class: "text" }, row.text));
    case "code":
      return h("div", base, h("span", { class: "who" }, "python"), h("pre", { class: "code" }, row.code));
    case "output":
      return h(
        "div",
        { ...base, class: `${base.class} ${row.status === "error" ? "failed" : ""}` },
        row.text ? h("pre", { class: "output" }, row.text) : null,
        row.truncated ? h("p", { class: "note" }, "(output cut)") : null,
        ...(row.images ?? []).map(imageView),
      );
    case "skill":
      return h("div", base, h("p", { class: "used" }, `used skill ${row.skill} · ${kb(row.bytes)} via ${row.via}${row.already_loaded ? " (already loaded)" : ""}`));
    case "mcp":
      return h(
        "div",
        { ...base, class: `${base.class} ${row.is_error ? "failed" : ""}` },
        h("p", { class: "used" }, `${row.text} · ${row.ms} ms via ${row.via}${row.is_error ? " · failed" : ""}`),
      );
    case "network":
      return h("div", { ...base, class: `${base.class} ${row.decision === "allowed" ? "" : "failed"}` }, h("p", { class: "used" }, row.rule === null ? row.text : `${row.text} · ${row.rule}`));
    case "notice":
      return h("div", base, h("pre", { class: "notice" }, row.text));
    case "error":
      return h("div", { ...base, role: "alert" }, h("pre", { class: "error" }, row.text));
  }
}
