import { join, resolve } from "node:path";
import { completeUtf8Length, decodeUtf8 } from "../json/index.js";
import { isProblem, probe, readBoundedFile } from "./files.js";
import { MAX_INSTRUCTION_BYTES } from "./limits.js";
import type { Diagnostic, InstructionFile } from "./types.js";
import { ALBEDO_DIR_NAME } from "../platform/index.js";

/** File name of a standing-orders file (S-11). */
export const INSTRUCTION_FILE = "AGENTS.md";

/** The instruction file locations, in the order their text is given to a model. */
export function instructionPaths(workspace: string, home: string): readonly { path: string; scope: InstructionFile["scope"] }[] {
  return [
    { path: join(resolve(home), ALBEDO_DIR_NAME, INSTRUCTION_FILE), scope: "user" },
    { path: join(resolve(workspace), INSTRUCTION_FILE), scope: "workspace" },
  ];
}

/** Reads both instruction files (missing ones are simply absent); problems become diagnostics. */
export async function discoverInstructions(
  workspace: string,
  home: string,
): Promise<{ files: InstructionFile[]; diagnostics: Diagnostic[] }> {
  const files: InstructionFile[] = [];
  const diagnostics: Diagnostic[] = [];
  const error = (path: string, code: string, message: string) => diagnostics.push({ severity: "error", path, code, message });
  for (const { path, scope } of instructionPaths(workspace, home)) {
    const found = await probe(path);
    if (found.kind === "missing") continue;
    if (found.kind === "problem") {
      error(path, found.problem.code, found.problem.message);
      continue;
    }
    const file = await readBoundedFile(path, MAX_INSTRUCTION_BYTES);
    if (isProblem(file)) {
      error(path, file.code, file.message);
      continue;
    }
    const text = decodeUtf8(file.bytes.subarray(0, completeUtf8Length(file.bytes)));
    if (text === undefined) {
      error(path, "invalid_utf8", `${path} is not valid UTF-8`);
      continue;
    }
    if (file.truncated) {
      diagnostics.push({
        severity: "warning",
        path,
        code: "instructions_truncated",
        message: `${path} is ${file.size} bytes; only the first MAX_INSTRUCTION_BYTES = ${MAX_INSTRUCTION_BYTES} are used`,
      });
    }
    const clean = text.startsWith("\uFEFF") ? text.slice(1) : text;
    files.push({ scope, path, resolvedPath: file.resolvedPath, text: clean, size: file.size, truncated: file.truncated });
  }
  return { files, diagnostics };
}
