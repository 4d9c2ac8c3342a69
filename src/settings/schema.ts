/**
 * The one schema of a settings file (D-4), shared by the global, project and session scopes.
 * Unknown top-level fields are kept (newer or other tools may own them); unknown fields inside a
 * known section are refused, since a typo there would silently change nothing.
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import { jsonNestingDepth, problemsOfIssues, type JsonProblem } from "../json/index.js";
import { LIMIT_MINIMUMS, MAX_LIMIT_VALUE, MIN_PACKAGES_MB, SANDBOX_MODES } from "../sandbox/index.js";
import {
  MAX_BASE_URL_LENGTH,
  MAX_CONTEXT_TOKENS,
  MAX_ENV_NAME_LENGTH,
  MAX_MAX_TOKENS,
  MAX_MODEL_NAME_LENGTH,
  MAX_SCRIPT_PATH_LENGTH,
  MIN_CONTEXT_TOKENS,
  MODEL_MODES,
  MODEL_PROVIDERS,
} from "../model/index.js";
import { remoteSettingsProblems, type RemoteKernelSettings } from "../kernel/index.js";
import { McpSection } from "../mcp/index.js";
import { NetworkSettingSchema } from "../network/index.js";
import { MAX_EXTRA_PACKAGES, packageProblem } from "../python/index.js";

export type SettingsScope = "global" | "project" | "session";

/** Unicode code points in a skill name listed in `on` / `off` (the S-4 name bound). */
export const MAX_SETTINGS_SKILL_NAME_LENGTH = 64;
/** Names in one `on` or `off` list. */
export const MAX_SETTINGS_SKILL_NAMES = 1024;
/** Largest pre-started kernel pool (K-11). */
export const MAX_KERNEL_POOL = 8;
/**
 * Largest `daemon.max_sessions`. Each local session holds 7 ZeroMQ sockets in the daemon's one
 * libzmq context (shell, control, stdin, iopub, heartbeat and its replacement, the RPC ROUTER),
 * whose default cap is 1,023 sockets: 128 sessions and MAX_KERNEL_POOL spares fit with room to spare.
 */
export const MAX_SESSIONS_LIMIT = 128;
/** Length of `kernel.kernelspec` and `kernel.python`. */
export const MAX_KERNEL_FIELD_LENGTH = 4096;
/**
 * Levels of arrays and objects in one settings value (the top-level object is 1). Our own fields
 * need 3; the rest is room for the unknown top-level fields other tools keep here (B: deep nesting).
 */
export const MAX_SETTINGS_DEPTH = 64;

/** One thing wrong with a settings value; `path` is a dotted path such as `skills.on[2]`. */
export type SettingsProblem = JsonProblem;

/** A message built from the offending value, for every issue of one schema. */
const says = (text: (got: string, input: unknown) => string) => ({ error: (issue: { input?: unknown }) => text(describe(issue.input), issue.input) });

/** Every variant of a string enum, as zod wants it (non-empty). */
function oneOf<T extends string>(values: readonly T[]) {
  const message = says((got) => `must be one of ${values.map((item) => `"${item}"`).join(", ")}, got ${got}`);
  return z.enum(values as unknown as [T, ...T[]], message);
}

function integer(min: number, max: number) {
  const message = says((got) => `must be an integer from ${min} to ${max}, got ${got}`);
  return z.number(message).int(message).min(min, message).max(max, message);
}

/** A non-empty (after trimming) string of at most `max` characters. */
function text(max: number) {
  const message = says((got) => `must be a non-empty string of at most ${max} characters, got ${got}`);
  return z.string(message).max(max, message).refine((value) => value.trim().length > 0, message);
}

/** An object holding only `shape`'s keys; each stray key is its own problem (see problemsOfIssues). */
function section<S extends z.ZodRawShape>(name: string, shape: S) {
  const allowed = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) => (issue.code === "unrecognized_keys" ? `unknown field; ${name} allows ${allowed}` : `must be an object, got ${describe(issue.input)}`),
  });
}

const Switch = oneOf(["on", "off"]);
export type Switch = z.infer<typeof Switch>;

/** A skill name as settings lists and patches name it. */
export const SkillName = z
  .string(says((got) => `a skill name must be a string, got ${got}`))
  .refine((value) => value.trim().length > 0, "a skill name must not be empty")
  .refine((value) => [...value].length <= MAX_SETTINGS_SKILL_NAME_LENGTH, {
    error: (issue) => `skill name has ${[...String(issue.input)].length} characters; at most ${MAX_SETTINGS_SKILL_NAME_LENGTH} (MAX_SETTINGS_SKILL_NAME_LENGTH)`,
  });

/** A list of skill names; past the bound only the length is reported, as each name would be noise. */
const SkillNames = z
  .array(SkillName, says((got) => `must be a list of skill names, got ${got}`))
  .max(MAX_SETTINGS_SKILL_NAMES, {
    error: (issue) => `lists ${(issue.input as unknown[]).length} names; at most ${MAX_SETTINGS_SKILL_NAMES} (MAX_SETTINGS_SKILL_NAMES) are allowed`,
  });

/** `skills` of one scope: only the global file may set a default. Runs the on/off overlap check even when some names are bad. */
function skillsSection(scope: SettingsScope) {
  const notHere = z.never({ error: () => `only the global settings may set a default, not the ${scope} scope` });
  return section("skills", { default: (scope === "global" ? Switch : notHere).optional(), on: SkillNames.optional(), off: SkillNames.optional() }).superRefine(
    (value, ctx) => {
      const names = (list: unknown) => (Array.isArray(list) ? list : []);
      const off = new Set(names(value.off).filter((name) => SkillName.safeParse(name).success));
      names(value.on).forEach((name, index) => {
        if (off.has(name)) ctx.addIssue({ code: "custom", path: ["on", index], message: `"${String(name)}" is listed in both on and off` });
      });
    },
    { when: () => true },
  );
}

/** Where remoteSettingsProblems' paths start; the issues it finds are placed below the `remote` field. */
const REMOTE_ROOT = "remote";

/** `kernel.remote` (K-12): a Jupyter Server to run kernels on; its rules are the remote kernel domain's. */
const RemoteSection = z.custom<RemoteKernelSettings>().superRefine((value, ctx) => {
  for (const [path, message] of remoteSettingsProblems(value, REMOTE_ROOT)) {
    ctx.addIssue({ code: "custom", path: path.slice(REMOTE_ROOT.length).split(".").filter((part) => part.length > 0), message });
  }
});

const KernelSection = section("kernel", {
  pool: integer(0, MAX_KERNEL_POOL).optional(),
  kernelspec: kernelField().optional(),
  python: kernelField().optional(),
  remote: RemoteSection.optional(),
  checkpoints: z.boolean(says((got) => `must be true or false, got ${got}`)).optional(),
});

/** `python.packages`: pip requirements `albedo setup` installs into the managed environment; each bad entry is its own problem. */
const PackageRequirement = z.string(says((got) => `must be a pip requirement string such as numpy or pandas>=2, got ${got}`)).superRefine((value, ctx) => {
  const message = packageProblem(value);
  if (message !== undefined) ctx.addIssue({ code: "custom", message });
});
const PackageList = z
  .array(PackageRequirement, says((got) => `must be a list of pip requirements, got ${got}`))
  .max(MAX_EXTRA_PACKAGES, { error: (issue) => `lists ${(issue.input as unknown[]).length} packages; at most ${MAX_EXTRA_PACKAGES} (MAX_EXTRA_PACKAGES)` });

/** `python` of one scope: only the global file may name packages, since they go into the one environment every session shares. */
function pythonSection(scope: SettingsScope) {
  const notHere = z.never({ error: () => `only the global settings may name packages, not the ${scope} scope` });
  return section("python", { packages: (scope === "global" ? PackageList : notHere).optional() });
}

/** `daemon`: bounds of the daemon itself (D-1); only the global file's are honoured. */
const DaemonSection = section("daemon", { max_sessions: integer(1, MAX_SESSIONS_LIMIT).optional() });

function kernelField() {
  const message = says((got) => `must be a non-empty string of at most ${MAX_KERNEL_FIELD_LENGTH} characters, got ${got}`);
  return z.string(message).min(1, message).max(MAX_KERNEL_FIELD_LENGTH, message);
}

// The sandbox's own range: a value it would refuse must not be saved, or every session would fail to open.
const limit = (key: keyof typeof LIMIT_MINIMUMS) => integer(LIMIT_MINIMUMS[key], MAX_LIMIT_VALUE).optional();
const LimitsSection = section("limits", {
  memoryMB: limit("memoryMB"), processes: limit("processes"), openFiles: limit("openFiles"), shmMB: limit("shmMB"),
  // The quota of each workspace's package layer (N-5), in MiB.
  packagesMB: integer(MIN_PACKAGES_MB, MAX_LIMIT_VALUE).optional(),
});

/** A portable environment variable name (POSIX: letters, digits, underscore; no leading digit). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// The value is never quoted: a key pasted here by mistake must not reach a log through this message.
const notAnEnvName = `must be the name of an environment variable (letters, digits and _, not starting with a digit, at most ${MAX_ENV_NAME_LENGTH} characters), not the key itself`;

/** The `model` section (O-7). Only the global file's provider, base_url, api_key_env and script are honoured (see resolveModelSettings). */
const ModelSectionShape = section("model", {
  provider: oneOf(MODEL_PROVIDERS).optional(),
  base_url: text(MAX_BASE_URL_LENGTH)
    .superRefine((url, ctx) => {
      const message = baseUrlProblem(url);
      if (message) ctx.addIssue({ code: "custom", message });
    })
    .optional(),
  name: text(MAX_MODEL_NAME_LENGTH).optional(),
  /** The NAME of the environment variable holding the key; the key itself is never a setting. */
  api_key_env: z.string(notAnEnvName).max(MAX_ENV_NAME_LENGTH, notAnEnvName).regex(ENV_NAME, notAnEnvName).optional(),
  mode: oneOf(MODEL_MODES).optional(),
  context_tokens: integer(MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS).optional(),
  /** The cap on one reply's tokens (Anthropic requires one; other providers ignore it). */
  max_tokens: integer(1, MAX_MAX_TOKENS).optional(),
  /** Whether a cell's images go to the model (I-2); false sends a text note instead. */
  images: z.boolean(says((got) => `must be true or false, got ${got}`)).optional(),
  script: text(MAX_SCRIPT_PATH_LENGTH)
    .refine((path) => isAbsolute(path), says((got) => `must be an absolute path, got ${got}`))
    .optional(),
});

/** Why `url` cannot be a model server's base URL, or undefined. Credentials in it would be a key stored in settings. */
function baseUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `must be an absolute http or https URL, got ${describe(url)}`;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `must be an http or https URL, got ${describe(url)}`;
  if (parsed.username !== "" || parsed.password !== "") return "must not carry a user name or password; the key comes from the variable api_key_env names";
  if (parsed.search !== "" || parsed.hash !== "") return `must not have a query or fragment (request paths are appended to it), got ${describe(url)}`;
  return undefined;
}

/** The settings schema of one scope; its sections are shared, only `skills.default` differs. */
function settingsShape(scope: SettingsScope) {
  return z.looseObject(
    {
      skills: skillsSection(scope).optional(),
      python: pythonSection(scope).optional(),
      sandbox: REPLACED_SECTIONS.sandbox.optional(),
      kernel: REPLACED_SECTIONS.kernel.optional(),
      daemon: REPLACED_SECTIONS.daemon.optional(),
      limits: REPLACED_SECTIONS.limits.optional(),
      model: REPLACED_SECTIONS.model.optional(),
      network: REPLACED_SECTIONS.network.optional(),
      mcp: (scope === "session" ? mcpNotHere : REPLACED_SECTIONS.mcp).optional(),
    },
    says((got) => `settings must be a JSON object, got ${got}`),
  );
}

/** Servers run on the host with the user's secrets: a session override (which a kernel's turn can reach) never configures one. */
const mcpNotHere = z.never({ error: () => "MCP servers are configured in the global or project settings, not per session" });

/** The sections a settings write replaces whole; the daemon's `PATCH /settings` body takes each as it is. */
export const REPLACED_SECTIONS = {
  sandbox: oneOf(SANDBOX_MODES),
  network: NetworkSettingSchema,
  kernel: KernelSection,
  daemon: DaemonSection,
  limits: LimitsSection,
  model: ModelSectionShape,
  mcp: McpSection,
} as const;

/** The schemas of the three scopes, built once. */
export const SETTINGS_SCHEMAS = { global: settingsShape("global"), project: settingsShape("project"), session: settingsShape("session") } as const;

export type Settings = z.infer<(typeof SETTINGS_SCHEMAS)["global"]>;
export type SkillsSettings = NonNullable<Settings["skills"]>;
export type ModelSection = z.infer<typeof ModelSectionShape>;

export type SettingsValidation =
  | { readonly ok: true; readonly settings: Settings }
  | { readonly ok: false; readonly problems: readonly SettingsProblem[] };

/** Checks a parsed JSON value against the schema for `scope`; returns the typed value or every problem found. */
export function validateSettings(value: unknown, scope: SettingsScope): SettingsValidation {
  const tooDeep = settingsDepthProblem(value);
  if (tooDeep) return { ok: false, problems: [tooDeep] };
  const parsed = SETTINGS_SCHEMAS[scope].safeParse(value);
  // The value itself, not zod's copy: the schema transforms nothing, and a write keeps the file's key order.
  return parsed.success ? { ok: true, settings: value as Settings } : { ok: false, problems: problemsOfIssues(parsed.error.issues) };
}

/** The problem of a value nested deeper than MAX_SETTINGS_DEPTH, or undefined; safe on any depth. */
export function settingsDepthProblem(value: unknown): SettingsProblem | undefined {
  if (jsonNestingDepth(value, MAX_SETTINGS_DEPTH) <= MAX_SETTINGS_DEPTH) return undefined;
  return { path: "", message: `nests arrays and objects more than ${MAX_SETTINGS_DEPTH} levels deep; at most ${MAX_SETTINGS_DEPTH} (MAX_SETTINGS_DEPTH)` };
}

/** Why `value` cannot be a skill name in a settings list, or undefined when it can. */
export function skillNameProblem(value: unknown): string | undefined {
  const parsed = SkillName.safeParse(value);
  return parsed.success ? undefined : parsed.error.issues[0]!.message;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? value.slice(0, 40) + "…" : value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeof value === "object" ? "an object" : typeof value;
}
