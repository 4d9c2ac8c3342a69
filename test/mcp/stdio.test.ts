/** The stdio client against the Node reference server (M-2, M-5): start, list, call, results, arguments checked. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpHub } from "../../src/mcp/index.js";
import { tempDirs } from "../support/tempDirs.js";
import { EVERYTHING, hubs, NEVER, resolved } from "./support.js";

const temps = tempDirs("alb-mcp-stdio-");
const made = hubs();
let hub: McpHub;

beforeAll(async () => {
  hub = made.make();
  await hub.start(await resolved(temps, { everything: { command: EVERYTHING } }));
});
afterAll(async () => {
  await made.closeAll();
  temps.cleanup();
});

describe("M-2 a stdio server starts and lists its tools", () => {
  it("is running with its tools qualified as server.tool and one-line descriptions", () => {
    const [status] = hub.servers();
    expect(status).toMatchObject({ name: "everything", status: "running", origin: "global" });
    expect(status!.tools).toBeGreaterThan(3);
    const names = hub.tools().map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["everything.echo", "everything.get-sum", "everything.get-tiny-image", "everything.get-structured-content"]));
    expect(hub.tools("everything").find((tool) => tool.tool === "echo")).toEqual({ name: "everything.echo", server: "everything", tool: "echo", description: "Echoes back the input string" });
    expect(hub.tools("nothing")).toEqual([]);
  });

  it("describes a tool with its input schema and output schema", () => {
    const echo = hub.describe("everything.echo");
    expect(echo.input_schema).toMatchObject({ type: "object", properties: { message: { type: "string" } } });
    expect(echo.output_schema).toBeUndefined();
    expect(hub.describe("everything.get-structured-content").output_schema).toMatchObject({ type: "object" });
  });
});

describe("M-5 calls of a stdio server", () => {
  it("returns the text of a call", async () => {
    const result = await hub.call("everything.echo", { message: "hi" }, { signal: NEVER, via: "python" });
    expect(result).toMatchObject({ value: "Echo: hi", images: [], is_error: false });
    expect(result.bytes).toBeGreaterThan(0);
    expect(result.ms).toBeGreaterThanOrEqual(0);
  });

  it("returns structuredContent as the value", async () => {
    const result = await hub.call("everything.get-structured-content", { location: "Chicago" }, { signal: NEVER });
    expect(result.value).toEqual({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 });
  });

  it("returns images apart, as mime and base64 data", async () => {
    const result = await hub.call("everything.get-tiny-image", {}, { signal: NEVER });
    expect(result.images).toEqual([{ mime: "image/png", data: expect.stringMatching(/^iVBORw0KGgo/) }]);
  });

  it("refuses arguments of the wrong type before sending, naming the JSON path", async () => {
    await expect(hub.call("everything.echo", { message: 5 }, { signal: NEVER })).rejects.toMatchObject({ code: "invalid_params", message: expect.stringContaining("/message: must be string") });
    await expect(hub.call("everything.get-sum", { a: 1 }, { signal: NEVER })).rejects.toMatchObject({ code: "invalid_params", message: expect.stringContaining("must have required property 'b'") });
  });

  it("an unknown server or tool is not_found", async () => {
    await expect(hub.call("nothing.echo", {}, { signal: NEVER })).rejects.toMatchObject({ code: "not_found" });
    await expect(hub.call("everything.nothing", {}, { signal: NEVER })).rejects.toMatchObject({ code: "not_found" });
    await expect(hub.call("everything", {}, { signal: NEVER })).rejects.toMatchObject({ code: "not_found" });
    expect(() => hub.describe("everything.nothing")).toThrow(expect.objectContaining({ code: "not_found" }));
  });
});
