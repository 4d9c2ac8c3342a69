/**
 * The `read` tool (O-5): reads a file in the workspace or in the folder of a skill loaded in this
 * conversation, judged by where the path really leads; anything else is refused in the tool result,
 * never read.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { completeUtf8Length, decodeUtf8 } from "../../json/index.js";
import { FileMovedError, openRegularFile, readAt, readSteady, within } from "../../platform/index.js";
import { MAX_READ_TOOL_BYTES, MAX_READ_TOOL_FILE_BYTES } from "../limits.js";
import type { Tool } from "./tool.js";

const schema = z
  .object({
    path: z.string().min(1).describe("a file path: absolute, or relative to the workspace; a skill's files are under its dir"),
    offset: z.number().int().min(0).optional().describe("byte to start at (default 0)"),
    limit: z.number().int().min(1).max(MAX_READ_TOOL_BYTES).optional().describe(`bytes to read (default and most ${MAX_READ_TOOL_BYTES})`),
  })
  .strict();

export const readTool: Tool<z.infer<typeof schema>> = {
  name: "read",
  description: "Read a text file in the workspace or in the folder of a skill you loaded in this conversation.",
  schema,
  async run({ path, offset = 0, limit = MAX_READ_TOOL_BYTES }, context) {
    const workspace = context.host.workspace;
    const wanted = isAbsolute(path) ? path : resolve(workspace, path);
    const real = realPath(wanted);
    if (real === undefined) return `Cannot read ${path}: no such file.`;
    const allowed = [workspace, ...context.ledger.list().flatMap((skill) => [skill.dir, skill.resolved_dir])].map((dir) => realPath(dir) ?? dir);
    if (!allowed.some((dir) => within(real, dir))) {
      return `Refused: ${path} is outside the workspace and the folders of the skills loaded in this conversation; the read tool reads only there.`;
    }
    const stateDir = context.host.stateDir;
    if (within(real, realPath(stateDir) ?? stateDir)) return `Refused: ${path} is in albedo's state dir, which the read tool never reads.`;
    return readRange(path, real, offset, limit);
  },
};

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Up to `limit` bytes of `real` from `offset`, as text with a header saying where they sit in the
 * file. `real` is opened without following a link and without blocking: a FIFO the kernel planted
 * is refused, never waited on. The bytes are of one version of the file (see readSteady).
 */
async function readRange(shown: string, real: string, offset: number, limit: number): Promise<string> {
  let opened;
  try {
    opened = openRegularFile(real, { noFollow: true });
  } catch (error) {
    return `Cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`;
  }
  if (opened.kind === "not_regular_file") return `Cannot read ${shown}: it is ${opened.what}, not a regular file; the read tool reads regular files only.`;
  try {
    return await readSteady(opened, (stats) => textOf(shown, opened.fd, Number(stats.size), offset, limit));
  } catch (error) {
    if (error instanceof FileMovedError) return `Cannot read ${shown}: it changed while it was read, twice in a row; read it again.`;
    throw error;
  }
}

/** The answer for `limit` bytes at `offset` of the open file `fd` of `size` bytes. */
function textOf(shown: string, fd: number, size: number, offset: number, limit: number): string {
  if (size > MAX_READ_TOOL_FILE_BYTES) return `Refused: ${shown} is ${size} bytes; the read tool opens files of at most ${MAX_READ_TOOL_FILE_BYTES} bytes.`;
  const wanted = Math.max(0, Math.min(limit, size - offset));
  const bytes = wanted === 0 ? Buffer.alloc(0) : readAt(fd, offset, wanted);
  // A character the end of the range cuts is left for the next read; anything else that fails to decode is not text.
  const text = decodeUtf8(bytes.subarray(0, offset + wanted >= size ? bytes.length : completeUtf8Length(bytes)));
  if (text === undefined) return `${shown} is not a text file (${size} bytes); the read tool shows text only.`;
  const end = offset + Buffer.byteLength(text);
  const more = end < size ? `; more from offset ${end}` : "";
  return `[${shown}: bytes ${offset}-${end} of ${size}${more}]\n${text}`;
}
