/**
 * The `read` tool (O-5): reads a file in the workspace or in the folder of a skill loaded in this
 * conversation, judged by where the path really leads; anything else is refused in the tool result,
 * never read.
 */
import { closeSync, fstatSync, openSync, readSync, realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { decodeUtf8Strict } from "../../json/index.js";
import { within } from "../../platform/index.js";
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

/** Up to `limit` bytes of `real` from `offset`, as text with a header saying where they sit in the file. */
function readRange(shown: string, real: string, offset: number, limit: number): string {
  let fd: number;
  try {
    fd = openSync(real, "r");
  } catch (error) {
    return `Cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return `Cannot read ${shown}: not a regular file.`;
    if (info.size > MAX_READ_TOOL_FILE_BYTES) return `Refused: ${shown} is ${info.size} bytes; the read tool opens files of at most ${MAX_READ_TOOL_FILE_BYTES} bytes.`;
    const buffer = Buffer.alloc(Math.max(0, Math.min(limit, info.size - offset)));
    const got = buffer.length === 0 ? 0 : readSync(fd, buffer, 0, buffer.length, offset);
    const decoded = decodeUtf8Strict(buffer.subarray(0, got));
    // Only a character cut by the end of the range may fail to decode; anything earlier is not text.
    if (!decoded.ok && decoded.offset < got - 3) return `${shown} is not a text file (${info.size} bytes); the read tool shows text only.`;
    const text = decoded.ok ? decoded.text : buffer.subarray(0, decoded.offset).toString("utf8");
    const end = offset + Buffer.byteLength(text);
    const more = end < info.size ? `; more from offset ${end}` : "";
    return `[${shown}: bytes ${offset}-${end} of ${info.size}${more}]\n${text}`;
  } finally {
    closeSync(fd);
  }
}
