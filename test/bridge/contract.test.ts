import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRIDGE_ENV_NAMES, BRIDGE_FIELDS, bridgeEnv, bridgeJson, type KernelBridge } from "../../src/bridge/index.js";
import { APP_ERROR_NUMBERS, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RPC_MAX_MESSAGE_BYTES, parametersOf } from "../../src/rpc/index.js";
import { SESSION_METHODS } from "../../src/session/rpcApi.js";
import { sandboxEnv } from "../../src/sandbox/index.js";
import type { Session } from "../../src/session/index.js";
import { PYTHON_CONTRACT_FILE, PYTHON_DEFAULT_DEADLINE_MS, pythonContract } from "../../src/api/pythonContract.js";
import { lastJson, runPython } from "../rpc/helpers.js";
import { openSession, sessionDirs, type SessionDirs } from "../session/fixtures.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** A record with every field set, as a session would hand it out. */
const SAMPLE: KernelBridge = {
  endpoint: "ipc:///tmp/alb-x/run/abc/rpc",
  token: "f".repeat(64),
  deadlineMs: 65_000,
  maxMessageBytes: RPC_MAX_MESSAGE_BYTES,
  extensions: ["python", "skills"],
};

/** Every JSON-RPC number the runtime answers with, and the code the kernel package must report for it. */
const WIRE_CODES: Record<number, string> = {
  ...Object.fromEntries(Object.entries(APP_ERROR_NUMBERS).map(([code, number]) => [number, code])),
  [PARSE_ERROR]: "parse_error",
  [INVALID_REQUEST]: "invalid_request",
  [METHOD_NOT_FOUND]: "method_not_found",
  [INVALID_PARAMS]: "invalid_params",
  [INTERNAL_ERROR]: "internal_error",
};

/** Python that prints what the kernel package makes of the bridge: its channel's bounds, the launcher's env, the error table. */
function probe(wire: Record<string, unknown>): string {
  return `
import json
from albedo import AlbedoError
from albedo._transport import Channel, error_from_wire
from albedo.launch import bridge_env
channel = Channel.from_env()
errors = {}
for number in json.loads(${JSON.stringify(JSON.stringify(Object.keys(WIRE_CODES).map(Number)))}):
    error = error_from_wire({"code": number, "message": "m"})
    errors[str(number)] = [error.code, error.rpc_code, isinstance(error, AlbedoError)]
print(json.dumps({
    "deadline_ms": round(channel.deadline * 1000),
    "max_bytes": channel.max_bytes,
    "launch_env": bridge_env(json.loads(${JSON.stringify(JSON.stringify(wire))})),
    "errors": errors,
}))`;
}

describe("K-4 one bridge contract", () => {
  let dirs: SessionDirs;
  let session: Session;
  beforeAll(async () => {
    dirs = await sessionDirs();
    // An external session boots no kernel: its record is all this suite needs.
    session = await openSession(dirs, { kernel: "external" });
  });
  afterAll(async () => {
    await session?.close();
    await dirs?.cleanup();
  });

  it("the committed kernel/albedo/_contract.py is what src/api/pythonContract.ts renders (else run `npm run contract`)", () => {
    expect(readFileSync(join(ROOT, PYTHON_CONTRACT_FILE), "utf8")).toBe(pythonContract());
  });

  it("a session tells its kernel the longest route deadline plus the margin, which is the kernel package's default", () => {
    const bridge = session.bridge();
    expect(bridge.deadlineMs).toBe(PYTHON_DEFAULT_DEADLINE_MS);
    expect(bridge).toMatchObject({ maxMessageBytes: RPC_MAX_MESSAGE_BYTES, extensions: ["python", "skills"] });
    expect(bridge.endpoint).toMatch(/^ipc:\/\//);
  });

  it("writes each field once, as the variable the kernel reads and the JSON member the daemon sends", () => {
    expect(bridgeEnv(SAMPLE)).toEqual({
      ALBEDO_RPC_ENDPOINT: SAMPLE.endpoint,
      ALBEDO_RPC_TOKEN: SAMPLE.token,
      ALBEDO_RPC_DEADLINE_MS: "65000",
      ALBEDO_RPC_MAX_MESSAGE_BYTES: String(RPC_MAX_MESSAGE_BYTES),
      ALBEDO_EXTENSIONS: "python,skills",
    });
    expect(bridgeJson(SAMPLE)).toEqual({
      endpoint: SAMPLE.endpoint, token: SAMPLE.token, deadline_ms: 65_000, max_message_bytes: RPC_MAX_MESSAGE_BYTES, extensions: ["python", "skills"],
    });
    expect(BRIDGE_ENV_NAMES).toEqual(Object.values(BRIDGE_FIELDS).map((field) => field.env));
  });

  it("the kernel package defaults to the session's deadline and limit, the launcher writes what the runtime writes, and every code maps to its exception", async () => {
    const bridge = session.bridge();
    const onlyAddress = { [BRIDGE_FIELDS.endpoint.env]: bridge.endpoint, [BRIDGE_FIELDS.token.env]: bridge.token };
    const result = lastJson(await runPython(probe(bridgeJson(bridge)), onlyAddress));
    expect(result.deadline_ms).toBe(bridge.deadlineMs);
    expect(result.max_bytes).toBe(bridge.maxMessageBytes);
    expect(result.launch_env).toEqual(bridgeEnv(bridge));
    expect(result.errors).toEqual(Object.fromEntries(Object.entries(WIRE_CODES).map(([number, code]) => [number, [code, Number(number), true]])));
  });
});

describe("K-4 K-5 the kernel package's methods come from the runtime's declarations", () => {
  it("each namespace method has the declared parameters, defaults and summary, and sends exactly its declared params", async () => {
    const code = `
import inspect, json
from albedo._namespaces import Skills, Commands
sent = []
class Recorder:
    def call(self, method, params): sent.append([method, params]); return {}
skills, commands = Skills(Recorder()), Commands(Recorder())
skills.read("demo"); skills.read("demo", "references/x.md", limit=10); commands.invoke("/help"); skills.list()
names = {"skills.list": skills.list, "skills.read": skills.read, "skills.resources": skills.resources, "commands.catalog": commands.catalog, "commands.invoke": commands.invoke}
print(json.dumps({"signatures": {m: str(inspect.signature(f)) for m, f in names.items()}, "docs": {m: f.__doc__ for m, f in names.items()}, "sent": sent, "repr": repr(skills)}))`;
    const result = lastJson(await runPython(code, {}));
    const declared = SESSION_METHODS.filter((method) => method.name in result.signatures);
    expect(declared.map((method) => method.name).sort()).toEqual(Object.keys(result.signatures).sort());
    for (const method of declared) {
      const shown = parametersOf(method).map((p) => (p.required ? p.name : `${p.name}=${typeof p.default === "string" ? `'${p.default}'` : String(p.default)}`));
      expect(result.signatures[method.name], method.name).toBe(`(${shown.join(", ")})`);
      expect(result.docs[method.name]).toBe(method.summary);
    }
    expect(result.sent).toEqual([
      ["skills.read", { name: "demo", resource: "SKILL.md", offset: 0, limit: 16384 }],
      ["skills.read", { name: "demo", resource: "references/x.md", offset: 0, limit: 10 }],
      ["commands.invoke", { name: "/help", arguments: "" }],
      ["skills.list", {}],
    ]);
    expect(result.repr).toBe("<albedo skills: list(), read(name, resource='SKILL.md', offset=0, limit=16384), resources(name)>");
  });
});

describe("K-4 K-12 the kernel package's transports share one declared protocol", () => {
  it("the local and the comm channel are RpcChannels, and no module imports another's private names", async () => {
    const code = `
import ast, json, pathlib
import albedo
from albedo._transport import Channel, RpcChannel
from albedo._comm import CommChannel
private = []
for path in sorted(pathlib.Path(albedo.__file__).parent.glob("*.py")):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level > 0 and node.module is not None:
            private += [f"{path.name}: {alias.name}" for alias in node.names if alias.name.startswith("_")]
protocol = ["call", "call_sync", "call_async", "listen"]
print(json.dumps({"subclasses": [issubclass(Channel, RpcChannel), issubclass(CommChannel, RpcChannel)], "private": private,
  "own": {c.__name__: [m for m in protocol if m in vars(c)] for c in (Channel, CommChannel)}}))`;
    const result = lastJson(await runPython(code, {}));
    expect(result.subclasses).toEqual([true, true]);
    expect(result.private).toEqual([]);
    expect(result.own).toEqual({ Channel: ["call_sync", "call_async", "listen"], CommChannel: ["call_sync", "call_async", "listen"] });
  });
});

describe("K-10 K-4 the sandbox environment comes from the bridge contract", () => {
  it("passes exactly the bridge's variables, and no other ALBEDO_* one or secret", () => {
    const profile = { workspace: "/w", runDir: "/s/run/x", stateDir: "/s", home: "/h", readOnly: [] };
    const spawn = { ...bridgeEnv(SAMPLE), ALBEDO_HOME: "/s", ALBEDO_RPC_OTHER: "x", ALBEDO_PYTHON: "/p", OPENAI_API_KEY: "secret" };
    const inside = sandboxEnv(profile, spawn);
    expect(Object.keys(inside).filter((name) => name.startsWith("ALBEDO_")).sort()).toEqual([...BRIDGE_ENV_NAMES].sort());
    expect(inside).toMatchObject(bridgeEnv(SAMPLE));
    expect(inside.OPENAI_API_KEY).toBeUndefined();
  });
});
