/**
 * A cell's outputs printed in order, its images as people see them in a terminal (I-3): each
 * image is checked by its bytes, kept in the state dir's image store, and printed as one label
 * line with the file's path, `[image 1 · 640×480 PNG · 23 KB] /…/images/<sha256>.png`, and drawn
 * inline on a terminal that says it can (kitty, iTerm2) when the output is that terminal. An
 * HTML output prints its text/plain part with a hint of where it renders. Checking an image is
 * asynchronous, so every output waits for the ones before it: the order printed is the kernel's.
 */
import type { ExecuteOutput } from "../../kernel/index.js";
import { checkImage, imageLabel, IMAGE_MIMES, SVG_MIME, type CheckedImage, type ImageStore } from "../../images/index.js";
import { visibleControls } from "../../text/index.js";
import type { OutputSink } from "./render.js";

/** Base64 characters of one kitty graphics escape (the protocol's chunk limit). */
const KITTY_CHUNK_CHARS = 4096;

/** How a terminal draws an image inline, if it does. */
export type InlineProtocol = "kitty" | "iterm2";

/**
 * The inline protocol of the terminal `stream` is, from the variables those terminals document
 * setting (kitty: KITTY_WINDOW_ID or TERM=xterm-kitty; iTerm2: TERM_PROGRAM=iTerm.app or
 * LC_TERMINAL=iTerm2); none when the stream is no terminal (piped, a file) or ALBEDO_INLINE_IMAGES=0.
 */
export function inlineProtocol(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): InlineProtocol | undefined {
  if (stream.isTTY !== true || env.ALBEDO_INLINE_IMAGES === "0") return undefined;
  if (env.KITTY_WINDOW_ID || env.TERM === "xterm-kitty") return "kitty";
  if (env.TERM_PROGRAM === "iTerm.app" || env.LC_TERMINAL === "iTerm2") return "iterm2";
  return undefined;
}

/** The escape sequence that draws `image` inline, or undefined when the protocol cannot carry its type (kitty takes PNG only). */
export function inlineImage(image: CheckedImage, protocol: InlineProtocol): string | undefined {
  const data = image.bytes.toString("base64");
  if (protocol === "iterm2") return `\x1b]1337;File=inline=1;size=${image.bytes.length};preserveAspectRatio=1:${data}\x07\n`;
  if (image.mime !== "image/png") return undefined;
  const chunks: string[] = [];
  for (let at = 0; at < data.length; at += KITTY_CHUNK_CHARS) {
    const more = at + KITTY_CHUNK_CHARS < data.length ? 1 : 0;
    chunks.push(`\x1b_G${at === 0 ? "a=T,f=100," : ""}m=${more};${data.slice(at, at + KITTY_CHUNK_CHARS)}\x1b\\`);
  }
  return `${chunks.join("")}\n`;
}

/** What a display bundle holds that a terminal cannot print as text. */
function bundleOf(output: ExecuteOutput): Record<string, unknown> | undefined {
  const type = output.header.msg_type;
  if (type !== "display_data" && type !== "execute_result" && type !== "update_display_data") return undefined;
  const data = (output.content as { data?: unknown }).data;
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
}

/** Prints one cell's outputs in order; image and HTML bundles as above, every other output through `print`. */
export class OutputPrinter {
  private chain: Promise<void> = Promise.resolve();
  private images = 0;
  private hinted = false;

  constructor(
    private readonly sink: OutputSink,
    private readonly store: ImageStore,
    private readonly print: (output: ExecuteOutput) => void,
    private readonly inline: InlineProtocol | undefined,
  ) {}

  /** Queues `output` behind the ones before it. */
  push(output: ExecuteOutput): void {
    this.chain = this.chain.then(() => this.show(output)).catch((error: unknown) => {
      this.sink.stderr.write(`albedo: an output could not be shown: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  }

  /** Resolves once every queued output is printed. */
  flush(): Promise<void> {
    return this.chain;
  }

  private async show(output: ExecuteOutput): Promise<void> {
    const bundle = bundleOf(output);
    const mime = bundle && [...IMAGE_MIMES, SVG_MIME].find((candidate) => Object.hasOwn(bundle, candidate));
    if (bundle === undefined || mime === undefined) {
      this.print(output);
      if (bundle !== undefined && Object.hasOwn(bundle, "text/html") && !this.hinted) {
        this.hinted = true;
        this.sink.stderr.write("(an HTML output, shown above as text; a Jupyter notebook on the albedo kernel renders it)\n");
      }
      return;
    }
    this.images += 1;
    const number = this.images;
    if (mime === SVG_MIME) {
      this.sink.stdout.write(`[image ${number} · SVG · not shown: an SVG is a document, not pixels; a notebook renders it]\n`);
      return;
    }
    const data = bundle[mime];
    const checked = typeof data === "string" ? await checkImage(mime, data) : { ok: false as const, note: `the ${mime} data is not text` };
    if (!checked.ok) {
      this.sink.stdout.write(`[image ${number} · not shown: ${visibleControls(checked.note)}]\n`);
      return;
    }
    const kept = await this.store.keep(checked.image);
    const where = kept.ok ? ` ${kept.image.path}` : ` (${kept.note})`;
    this.sink.stdout.write(`${imageLabel(number, checked.image)}${where}\n`);
    const drawn = this.inline === undefined ? undefined : inlineImage(checked.image, this.inline);
    if (drawn !== undefined) this.sink.stdout.write(drawn);
  }
}
