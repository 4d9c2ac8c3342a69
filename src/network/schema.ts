/**
 * The `network` setting's value (N-1): `false`, `true`, or a policy object. Each problem names
 * its path below `network` and the offending value; the settings schema places these issues
 * under its own `network` field as it does the other sections'.
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import { problemsOfIssues, type JsonProblem } from "../json/index.js";
import {
  MAX_CA_PATH_LENGTH, MAX_ENV_NAME_LENGTH, MAX_HEADER_NAME_LENGTH, MAX_PATTERNS, MAX_PRESET_NAMES, MAX_SECRET_FORMAT_LENGTH, MAX_SECRET_HEADERS,
  MAX_SECRET_HOSTS,
} from "./limits.js";
import { parseHost, parsePattern } from "./patterns.js";
import { findPreset, PRESETS } from "./presets.js";

/** One header a secrets host gets: its value is `format` with `{}` replaced by the host variable `from_env`. */
export interface SecretHeaderSetting {
  readonly from_env: string;
  /** Default `{}`: the variable's value alone. */
  readonly format?: string;
}

export interface NetworkPolicySetting {
  readonly allow?: readonly string[];
  readonly deny?: readonly string[];
  readonly presets?: readonly string[];
  readonly secrets?: Readonly<Record<string, { readonly headers: Readonly<Record<string, SecretHeaderSetting>> }>>;
  readonly upstream_ca?: string;
}

/** The `network` setting: off, the host's network unfiltered, or a policy. */
export type NetworkSetting = boolean | NetworkPolicySetting;

/** The placeholder a secret's `format` holds once. */
export const SECRET_PLACEHOLDER = "{}";

/** Headers the proxy owns (framing, hop by hop, the target): a secret never sets them. */
const RESERVED_HEADERS = new Set(["host", "connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade", "content-length"]);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A value as a message quotes it: JSON, cut at 60 characters. */
function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "a list" : "an object";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

const says = (text: (got: string) => string) => ({ error: (issue: { input?: unknown }) => text(shown(issue.input)) });

/** A strict object whose stray keys are each named with what it allows. */
function section<S extends z.ZodRawShape>(name: string, shape: S) {
  const allowed = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) => (issue.code === "unrecognized_keys" ? `unknown field; ${name} allows ${allowed}` : `must be an object, got ${shown(issue.input)}`),
  });
}

/** A list of at most `max` strings, each checked by `problem` (a message, or undefined when fine). */
function checkedList(what: string, max: number, problem: (item: string) => string | undefined) {
  const item = z.string(says((got) => `must be a string, got ${got}`)).superRefine((value, ctx) => {
    const message = problem(value);
    if (message !== undefined) ctx.addIssue({ code: "custom", message });
  });
  return z.array(item, says((got) => `must be a list of ${what}, got ${got}`)).max(max, {
    error: (issue) => `lists ${(issue.input as unknown[]).length} ${what}; at most ${max} are allowed`,
  });
}

const Patterns = checkedList("patterns", MAX_PATTERNS, (text) => {
  const parsed = parsePattern(text);
  return typeof parsed === "string" ? parsed : undefined;
});

const PresetNames = checkedList("preset names", MAX_PRESET_NAMES, (name) =>
  findPreset(name) ? undefined : `unknown preset ${shown(name)}; the presets are ${PRESETS.map((preset) => preset.name).join(", ")}`,
);

const SecretHeader = section("a secret header", {
  from_env: z
    .string(says((got) => `must name a host environment variable, got ${got}`))
    .max(MAX_ENV_NAME_LENGTH, says((got) => `must be a variable name of at most ${MAX_ENV_NAME_LENGTH} characters, got ${got}`))
    .regex(ENV_NAME, says((got) => `must be a variable name (letters, digits and _, not starting with a digit), got ${got}`)),
  format: z
    .string(says((got) => `must be a string holding {} once, got ${got}`))
    .max(MAX_SECRET_FORMAT_LENGTH, says((got) => `must be at most ${MAX_SECRET_FORMAT_LENGTH} characters, got ${got}`))
    .refine((format) => format.split(SECRET_PLACEHOLDER).length === 2, says((got) => `must hold {} (where the value goes) exactly once, got ${got}`))
    .refine((format) => !/[\r\n\0]/.test(format), says((got) => `must not hold a line break or NUL, got ${got}`))
    .optional(),
});

/** Header names of one host: tokens, none the proxy owns, none twice in different case. */
const SecretHeaders = z
  .record(z.string(), SecretHeader, says((got) => `must be an object of header names, got ${got}`))
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > MAX_SECRET_HEADERS) ctx.addIssue({ code: "custom", message: `names ${names.length} headers; at most ${MAX_SECRET_HEADERS} (MAX_SECRET_HEADERS)` });
    const seen = new Set<string>();
    for (const name of names) {
      const lower = name.toLowerCase();
      const message =
        !HEADER_NAME.test(name) || name.length > MAX_HEADER_NAME_LENGTH
          ? `${shown(name)} is not a header name (letters, digits and !#$%&'*+-.^_\`|~, at most ${MAX_HEADER_NAME_LENGTH})`
          : RESERVED_HEADERS.has(lower) || lower.startsWith("proxy-")
            ? `${shown(name)} is a header the proxy sets itself`
            : seen.has(lower)
              ? `${shown(name)} is named twice (header names ignore case)`
              : undefined;
      seen.add(lower);
      if (message) ctx.addIssue({ code: "custom", path: [name], message });
    }
  });

/** Hosts with headers: host names (no wildcard, port or IP), each once. */
const Secrets = z
  .record(z.string(), section("a secrets host", { headers: SecretHeaders }), says((got) => `must be an object of host names, got ${got}`))
  .superRefine((secrets, ctx) => {
    const hosts = Object.keys(secrets);
    if (hosts.length > MAX_SECRET_HOSTS) ctx.addIssue({ code: "custom", message: `names ${hosts.length} hosts; at most ${MAX_SECRET_HOSTS} (MAX_SECRET_HOSTS)` });
    const seen = new Set<string>();
    for (const text of hosts) {
      const host = parseHost(text);
      const message =
        !host || host.ip ? `${shown(text)} is not a host name (secrets are added by name: no wildcard, port or IP address)` : seen.has(host.name) ? `${shown(text)} names a host already listed` : undefined;
      if (host) seen.add(host.name);
      if (message) ctx.addIssue({ code: "custom", path: [text], message });
    }
  });

const UpstreamCa = z
  .string(says((got) => `must be the absolute path of a PEM file, got ${got}`))
  .max(MAX_CA_PATH_LENGTH, says((got) => `must be at most ${MAX_CA_PATH_LENGTH} characters, got ${got}`))
  .refine((path) => isAbsolute(path), says((got) => `must be an absolute path, got ${got}`));

const PolicyObject = section("network", {
  allow: Patterns.optional(),
  deny: Patterns.optional(),
  presets: PresetNames.optional(),
  secrets: Secrets.optional(),
  upstream_ca: UpstreamCa.optional(),
});

/**
 * The `network` value's schema: a boolean, or a policy object whose problems carry their paths.
 * Nothing is transformed: a valid value is the value given.
 */
export const NetworkSettingSchema = z.custom<NetworkSetting>().superRefine((value, ctx) => {
  if (typeof value === "boolean") return;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    ctx.addIssue({ code: "custom", message: `must be false, true or a policy object {"allow", "deny", "presets", "secrets", "upstream_ca"}, got ${shown(value)}` });
    return;
  }
  const parsed = PolicyObject.safeParse(value);
  // Re-raised one per path, a stray key at its own, so the settings schema places each below `network`.
  for (const issue of parsed.success ? [] : parsed.error.issues) {
    const paths = issue.code === "unrecognized_keys" ? issue.keys.map((key) => [...issue.path, key]) : [issue.path];
    for (const path of paths) ctx.addIssue({ code: "custom", path, message: issue.message });
  }
});

export type NetworkSettingCheck = { readonly ok: true; readonly setting: NetworkSetting } | { readonly ok: false; readonly problems: readonly JsonProblem[] };

/** Checks a `network` value; returns it typed, or every problem with its path below `network`. */
export function checkNetworkSetting(value: unknown): NetworkSettingCheck {
  const parsed = NetworkSettingSchema.safeParse(value);
  return parsed.success ? { ok: true, setting: value as NetworkSetting } : { ok: false, problems: problemsOfIssues(parsed.error.issues) };
}
