/** The stub's script file (format in docs/turns.md): read once, bounded, checked whole before any request. */
import { z } from "zod";
import { parseJsonWellFormed } from "../json/index.js";
import { readFileBounded } from "../platform/index.js";
import { ModelError } from "./errors.js";
import { MAX_MODEL_TOOL_CALLS, MAX_STUB_DELAY_MS, MAX_STUB_REPLIES, MAX_STUB_SCRIPT_BYTES } from "./limits.js";

const Count = z.number().int().nonnegative();

const StubCall = z.strictObject({
  id: z.string().min(1).optional(),
  name: z.string().min(1),
  // An object is sent as its JSON; a string is sent as it is, so a script can send malformed JSON on purpose.
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
});

const StubReply = z
  .strictObject({
    comment: z.string().optional(),
    expect_tool: z.string().min(1).optional(),
    text: z.string().optional(),
    tool_calls: z.array(StubCall).min(1).max(MAX_MODEL_TOOL_CALLS).optional(),
    finish_reason: z.enum(["stop", "tool_calls", "length", "content_filter"]).optional(),
    usage: z.strictObject({ prompt_tokens: Count, completion_tokens: Count }).optional(),
    delay_ms: z.number().int().min(0).max(MAX_STUB_DELAY_MS).optional(),
  })
  .refine((reply) => reply.text !== undefined || reply.tool_calls !== undefined, { message: "a reply needs text, tool_calls or both" });

const StubScriptShape = z.strictObject({
  comment: z.string().optional(),
  replies: z.array(StubReply).min(1).max(MAX_STUB_REPLIES),
});

export type StubScript = z.infer<typeof StubScriptShape>;
export type StubEntry = StubScript["replies"][number];

/** The script at `file`; throws ModelError `config` naming the file when it is missing, unreadable, too big, not JSON or not a script. */
export async function readStubScript(file: string): Promise<StubScript> {
  const text = await readScriptText(file);
  let value: unknown;
  try {
    value = parseJsonWellFormed(text);
  } catch (error) {
    throw new ModelError("config", `the stub script ${file} (model.script) is not valid JSON: ${(error as Error).message}`);
  }
  const result = StubScriptShape.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  throw new ModelError("config", `the stub script ${file} (model.script) does not fit the stub format${where}: ${issue?.message ?? "unknown problem"} (see docs/turns.md)`);
}

async function readScriptText(file: string): Promise<string> {
  let found;
  try {
    found = await readFileBounded(file, MAX_STUB_SCRIPT_BYTES);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "does not exist" : `cannot be opened (${code ?? String(error)})`;
    throw new ModelError("config", `the stub script ${file} (model.script) ${why}`);
  }
  if (found.kind === "not_regular_file") throw new ModelError("config", `the stub script ${file} (model.script) is not a regular file`);
  if (found.kind === "oversize") throw new ModelError("config", `the stub script ${file} (model.script) is over ${MAX_STUB_SCRIPT_BYTES} bytes (MAX_STUB_SCRIPT_BYTES)`);
  return found.bytes.toString("utf8");
}
