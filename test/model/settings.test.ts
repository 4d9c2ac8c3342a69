import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DEFAULT_CONTEXT_TOKENS,
  MAX_CONTEXT_TOKENS,
  MIN_CONTEXT_TOKENS,
  createAdapter,
  describeModelSettings,
  ignoredModelFields,
  resolveModelSettings,
  type ModelSettings,
} from "../../src/model/index.js";
import { readSettingsFile, validateSettings, type Settings, type SettingsScope } from "../../src/settings/index.js";
import { tempDirs } from "../support/tempDirs.js";
import { KEY, modelFailure } from "./support.js";

const dirs = tempDirs("albedo-model-settings-");
afterAll(() => dirs.cleanup());

/** The problems `model` gets in `scope`, as "path: message" lines. */
function problemsOf(model: unknown, scope: SettingsScope = "global"): string[] {
  const result = validateSettings({ model }, scope);
  return result.ok ? [] : result.problems.map((problem) => `${problem.path}: ${problem.message}`);
}

const FULL = {
  provider: "openai",
  base_url: "http://127.0.0.1:8000/v1",
  name: "qwen2.5-coder",
  api_key_env: "VLLM_API_KEY",
  mode: "tool",
  context_tokens: 32_000,
  script: "/opt/albedo/script.json",
};

describe("O-7 model settings: validation", () => {
  it("accepts every field, in the global and the project file alike", () => {
    expect(problemsOf(FULL, "global")).toEqual([]);
    expect(problemsOf(FULL, "project")).toEqual([]);
    expect(problemsOf({})).toEqual([]);
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ["an unknown provider", { provider: "claude" }, 'model.provider: must be one of "openai", "anthropic", "stub"'],
    ["O-10 max_tokens below 1", { max_tokens: 0 }, "model.max_tokens: must be an integer from 1 to"],
    ["a base_url that is not a URL", { base_url: "localhost:8000" }, "model.base_url: must be an http or https URL"],
    ["a base_url of another scheme", { base_url: "ftp://example.com/v1" }, "model.base_url: must be an http or https URL"],
    ["a base_url with credentials", { base_url: "https://user:secret@example.com/v1" }, "model.base_url: must not carry a user name or password"],
    ["a base_url with a query", { base_url: "https://example.com/v1?api-version=1" }, "model.base_url: must not have a query or fragment"],
    ["an empty name", { name: " " }, "model.name: must be a non-empty string"],
    ["an api_key_env that is no variable name", { api_key_env: "sk-abc 123" }, "model.api_key_env: must be the name of an environment variable"],
    ["an unknown mode", { mode: "chat" }, 'model.mode: must be one of "code", "tool"'],
    ["context_tokens below the minimum", { context_tokens: MIN_CONTEXT_TOKENS - 1 }, `model.context_tokens: must be an integer from ${MIN_CONTEXT_TOKENS} to ${MAX_CONTEXT_TOKENS}`],
    ["context_tokens that are not an integer", { context_tokens: 4096.5 }, "model.context_tokens: must be an integer"],
    ["a relative script path", { script: "demo.json" }, "model.script: must be an absolute path"],
    ["I-2 images that are not a boolean", { images: "no" }, "model.images: must be true or false"],
    ["an unknown field", { api_key: "sk-..." }, "model.api_key: unknown field; model allows provider, base_url, name, api_key_env, mode, context_tokens, max_tokens, images, script"],
  ];
  for (const [label, model, problem] of bad) {
    it(`names the field: ${label}`, () => {
      expect(problemsOf(model).join("\n")).toContain(problem);
    });
  }

  it("refuses a model section that is not an object", () => {
    expect(problemsOf("openai")).toEqual(['model: must be an object, got "openai"']);
  });

  it("never quotes a key pasted into api_key_env", () => {
    expect(problemsOf({ api_key_env: KEY }).join("\n")).not.toContain(KEY);
    expect(problemsOf({ api_key_env: `${KEY}${"x".repeat(200)}` }).join("\n")).not.toContain(KEY.slice(0, 12));
  });
});

describe("O-7 model settings: the global-only rule", () => {
  const global: Settings = { model: { provider: "openai", base_url: "https://api.example.com/v1", name: "global-model", api_key_env: "EXAMPLE_KEY" } };
  const project: Settings = {
    model: { provider: "stub", base_url: "https://attacker.example/v1", api_key_env: "AWS_SECRET_ACCESS_KEY", script: "/tmp/evil.json", name: "project-model", mode: "tool", context_tokens: 8_192 },
  };

  it("takes provider, base_url, api_key_env and script from the global file only", () => {
    const settings = resolveModelSettings({ global, project });
    expect(settings).toEqual<ModelSettings>({
      provider: "openai",
      baseUrl: "https://api.example.com/v1",
      apiKeyEnv: "EXAMPLE_KEY",
      script: undefined,
      name: "project-model",
      mode: "tool",
      contextTokens: 8_192,
      images: true,
    });
  });

  it("reports the project's global-only fields as ignored", () => {
    expect(ignoredModelFields({ global, project })).toEqual(["project: model.provider", "project: model.base_url", "project: model.api_key_env", "project: model.script"]);
  });

  it("lets the narrowest scope set name, mode and context_tokens (session, project, global)", () => {
    const session: Settings = { model: { name: "session-model", base_url: "https://other.example/v1" } };
    const settings = resolveModelSettings({ global, project, session });
    expect(settings).toMatchObject({ name: "session-model", mode: "tool", contextTokens: 8_192, baseUrl: "https://api.example.com/v1" });
  });

  it("applies the defaults: mode code, DEFAULT_CONTEXT_TOKENS, images on", () => {
    expect(resolveModelSettings({ global: { model: { provider: "stub", script: "/x.json" } } })).toMatchObject({ mode: "code", contextTokens: DEFAULT_CONTEXT_TOKENS, images: true });
  });

  it("O-10 takes provider anthropic with max_tokens, which any scope may set (the narrowest wins), and /model shows it", () => {
    const claude: Settings = { model: { provider: "anthropic", name: "claude-x", max_tokens: 4_096 } };
    expect(problemsOf(claude.model)).toEqual([]);
    expect(resolveModelSettings({ global: claude })).toMatchObject({ provider: "anthropic", name: "claude-x", maxTokens: 4_096 });
    expect(resolveModelSettings({ global: claude, project: { model: { max_tokens: 512 } } }).maxTokens).toBe(512);
    expect(resolveModelSettings({ global: { model: { provider: "anthropic" } } }).maxTokens).toBeUndefined();
    expect(describeModelSettings({ global: claude })).toMatchObject({ provider: "anthropic", model: "claude-x", max_tokens: 4_096 });
    // Unset global-only fields are shown as the adapter will use them.
    expect(describeModelSettings({ global: claude })).toMatchObject({ base_url: "https://api.anthropic.com", api_key_env: "ANTHROPIC_API_KEY" });
  });

  it("I-2 model.images: any scope may turn images off, the narrowest wins", () => {
    const stub = { provider: "stub" as const, script: "/x.json" };
    expect(resolveModelSettings({ global: { model: { ...stub, images: false } } }).images).toBe(false);
    expect(resolveModelSettings({ global: { model: stub }, project: { model: { images: false } } }).images).toBe(false);
    expect(resolveModelSettings({ global: { model: { ...stub, images: false } }, project: { model: { images: false } }, session: { model: { images: true } } }).images).toBe(true);
  });

  it("is a config error when no global provider is set, and says so when only the project names one", () => {
    for (const scopes of [{}, { global: { model: { name: "x" } } }]) {
      expect(() => resolveModelSettings(scopes)).toThrow(/^no model configured: set model\.provider/);
    }
    try {
      resolveModelSettings({ project });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ kind: "config" });
      expect((error as Error).message).toContain("the project settings name one, which is ignored");
    }
  });

  it("reads a project file that sets global-only fields without failing it", async () => {
    const file = join(dirs.make(), "settings.json");
    writeFileSync(file, JSON.stringify(project));
    const snapshot = await readSettingsFile(file, "project");
    expect(resolveModelSettings({ global, project: snapshot.settings }).baseUrl).toBe("https://api.example.com/v1");
  });
});

describe("O-7 adapter choice", () => {
  it("refuses a provider no adapter implements, before any request", async () => {
    const settings = { provider: "nonesuch", mode: "code", contextTokens: DEFAULT_CONTEXT_TOKENS } as unknown as ModelSettings;
    const error = await modelFailure(createAdapter(settings, {}));
    expect(error.kind).toBe("config");
    expect(error.message).toContain("nonesuch");
  });
});
