import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MAX_TOOL_ARGUMENT_DEPTH, type ToolCall } from "../../src/model/index.js";
import { boundToolText, GatheredText } from "../../src/turns/tools/bounds.js";
import { runToolCall, type Tool, type ToolContext } from "../../src/turns/tools/index.js";

describe("O-3 B the python tool keeps what it may return as output arrives and counts the rest", () => {
  it("keeps at most the limit, on a character boundary, and counts every byte added", () => {
    const gathered = new GatheredText(10);
    gathered.add("abcdefghi");
    gathered.add("é"); // two bytes with room for one: not split, not kept
    gathered.add("x".repeat(1000));
    expect(gathered.text).toBe("abcdefghi");
    expect(gathered.bytes).toBe(9 + 2 + 1000);
  });

  it("a text at the limit is kept whole; one byte more is cut with a note counting what was never kept", () => {
    const exact = new GatheredText(1000);
    exact.add("y".repeat(1000));
    expect(boundToolText(exact.text, 1000, exact.bytes)).toEqual({ text: "y".repeat(1000), truncated: false });
    const over = new GatheredText(1000);
    over.add("y".repeat(1000));
    over.add("z".repeat(3 * 1024 * 1024));
    const bounded = boundToolText(over.text, 1000, over.bytes);
    expect(bounded.truncated).toBe(true);
    expect(Buffer.byteLength(bounded.text)).toBeLessThanOrEqual(1000);
    const shown = bounded.text.split("\n")[0]!.length;
    expect(bounded.text).toContain(`[albedo: ${((1000 + 3 * 1024 * 1024 - shown) / 1024 / 1024).toFixed(1)} MB more left out`);
  });
});

describe("O-3 B tool-call arguments nested past MAX_TOOL_ARGUMENT_DEPTH", () => {
  it("are answered with an error naming the bound, before they are parsed or the tool runs", async () => {
    let ran = false;
    const anything: Tool = { name: "anything", description: "takes any JSON", schema: z.unknown(), run: async () => ((ran = true), "ran") };
    const deep: ToolCall = { id: "c1", name: "anything", arguments: `{"a": ${"[".repeat(100_000)}${"]".repeat(100_000)}}` };
    const answer = await runToolCall(deep, [anything], {} as ToolContext);
    expect(answer.result).toBe(`Error: the arguments of anything nest deeper than MAX_TOOL_ARGUMENT_DEPTH (${MAX_TOOL_ARGUMENT_DEPTH} levels of arrays and objects); send a flatter JSON object.`);
    expect(ran).toBe(false);
    const atBound: ToolCall = { ...deep, arguments: `${"[".repeat(MAX_TOOL_ARGUMENT_DEPTH)}${"]".repeat(MAX_TOOL_ARGUMENT_DEPTH)}` };
    expect((await runToolCall(atBound, [anything], {} as ToolContext)).result).toBe("ran");
  });
});
