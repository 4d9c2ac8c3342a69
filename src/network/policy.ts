/**
 * A `network` setting compiled once into the answers the proxy asks on every connection: may
 * this host and port be reached, by which rule, may it be an internal address, which headers
 * does it get. A compiled policy is immutable; a change compiles a new one and the proxy's
 * getter returns it to the next connection.
 */
import { describeClass, type AddressClass } from "./addresses.js";
import { DEFAULT_PORTS, hostForPattern, matchesHost, matchesPort, parseHost, parsePattern, type Host, type Pattern } from "./patterns.js";
import { findPreset } from "./presets.js";
import { SECRET_PLACEHOLDER, type NetworkSetting } from "./schema.js";

/** One header the proxy sets for a secrets host. */
export interface SecretHeader {
  /** As the setting writes it; sent in this case. */
  readonly name: string;
  readonly fromEnv: string;
  /** Holds SECRET_PLACEHOLDER once. */
  readonly format: string;
}

/** Why a connection was refused: the policy's own kinds, and the proxy's ("internal" address). */
export type DenialKind = "off" | "denied" | "not-allowed" | "internal";

export type Decision =
  | {
      readonly allowed: true;
      /** The setting that allowed it: `network.allow pypi.org`, `network.presets github (*.githubusercontent.com)`, `network: true`. */
      readonly rule: string;
      /** Whether the host may resolve to an internal address: an allow entry names this host and this port exactly. */
      readonly internalAllowed: boolean;
    }
  | { readonly allowed: false; readonly kind: DenialKind; readonly reason: string; readonly hint: string };

export interface NetworkPolicy {
  /** off (`false`), open (`true`: the host's network, unfiltered), or a policy object. */
  readonly mode: "off" | "open" | "policy";
  /** Host names and addresses the policy lets through (allow entries and presets' patterns). */
  readonly entries: number;
  /** The PEM file named by `upstream_ca`, for checking intercepted hosts' certificates. */
  readonly upstreamCa?: string;
  /** May `host` (a name or IP literal, any case) be reached on `port`, and why. */
  decide(host: string | Host, port: number): Decision;
  /** The headers `host` gets, or undefined when it carries no secret (then it is never intercepted). */
  secretsFor(host: string | Host): readonly SecretHeader[] | undefined;
}

interface AllowRule {
  readonly pattern: Pattern;
  readonly rule: string;
  /** From `allow` itself (a preset's entry never lets a name reach an internal address). */
  readonly explicit: boolean;
}

const asHost = (host: string | Host): Host | undefined => (typeof host === "string" ? parseHost(host) : host);

/** Compiles a checked `network` setting (see checkNetworkSetting); throws on an entry the check would have refused. */
export function compilePolicy(setting: NetworkSetting): NetworkPolicy {
  if (setting === false) return fixedPolicy("off");
  if (setting === true) return fixedPolicy("open");
  const pattern = (text: string): Pattern => {
    const parsed = parsePattern(text);
    if (typeof parsed === "string") throw new Error(`network: ${parsed}`);
    return parsed;
  };
  const allow: AllowRule[] = (setting.allow ?? []).map((text) => ({ pattern: pattern(text), rule: `network.allow ${text}`, explicit: true }));
  for (const name of setting.presets ?? []) {
    const preset = findPreset(name);
    if (!preset) throw new Error(`network: unknown preset ${JSON.stringify(name)}`);
    for (const text of preset.patterns) allow.push({ pattern: pattern(text), rule: `network.presets ${name} (${text})`, explicit: false });
  }
  const deny = (setting.deny ?? []).map(pattern);
  const secrets = new Map<string, SecretHeader[]>();
  for (const [text, { headers }] of Object.entries(setting.secrets ?? {})) {
    const host = parseHost(text);
    if (!host || host.ip) throw new Error(`network: secrets host ${JSON.stringify(text)} is not a host name`);
    secrets.set(host.name, Object.entries(headers).map(([name, header]) => ({ name, fromEnv: header.from_env, format: header.format ?? SECRET_PLACEHOLDER })));
  }
  return {
    mode: "policy",
    entries: allow.length,
    ...(setting.upstream_ca === undefined ? {} : { upstreamCa: setting.upstream_ca }),
    decide: (given, port) => {
      const host = asHost(given);
      if (!host) return { allowed: false, kind: "not-allowed", reason: "not a host name", hint: "name a host" };
      return decide(allow, deny, host, port);
    },
    secretsFor: (given) => {
      const host = asHost(given);
      return host && !host.ip ? secrets.get(host.name) : undefined;
    },
  };
}

function decide(allow: readonly AllowRule[], deny: readonly Pattern[], host: Host, port: number): Decision {
  const denied = deny.find((pattern) => matchesHost(pattern, host) && matchesPort(pattern, port, "any"));
  if (denied) return { allowed: false, kind: "denied", reason: `denied by network.deny ${denied.text}`, hint: `remove ${denied.text} from network.deny to allow it` };
  const named = allow.filter((entry) => matchesHost(entry.pattern, host));
  const found = named.filter((entry) => matchesPort(entry.pattern, port, DEFAULT_PORTS));
  if (found.length === 0) {
    const reason = named.length > 0 ? `port ${port} is not in network.allow` : "not in network.allow";
    return { allowed: false, kind: "not-allowed", reason, hint: allowHint(host, port) };
  }
  const exact = found.find((entry) => entry.explicit && entry.pattern.kind !== "subdomains" && entry.pattern.port === port);
  return { allowed: true, rule: (exact ?? found[0]!).rule, internalAllowed: exact !== undefined };
}

/** The policy of `false` (everything refused) or `true` (everything let through, internal addresses too). */
function fixedPolicy(mode: "off" | "open"): NetworkPolicy {
  const decision = (host: string | Host, port: number): Decision => {
    if (mode === "open") return { allowed: true, rule: "network: true", internalAllowed: true };
    const parsed = asHost(host);
    return { allowed: false, kind: "off", reason: "network is off", hint: parsed ? allowHint(parsed, port) : "name a host" };
  };
  return { mode, entries: 0, decide: decision, secretsFor: () => undefined };
}

function allowHint(host: Host, port: number, withPort = false): string {
  return `allow it: albedo network allow ${hostForPattern(host, port, withPort)}`;
}

/** The refusal of an allowed host whose address is internal and that no exact allow entry names. */
export function internalDenial(host: Host, port: number, address: string, found: AddressClass): Extract<Decision, { allowed: false }> {
  const what = describeClass(found);
  const reason = host.ip ? `${what}` : `resolves to ${address}, ${what}`;
  return { allowed: false, kind: "internal", reason, hint: allowHint(host, port, true) };
}

/** The one-line body of a 403: `albedo: pypi.org is not allowed (not in network.allow); allow it: albedo network allow pypi.org`. */
export function denialLine(host: Host, port: number, denial: Extract<Decision, { allowed: false }>): string {
  return `albedo: ${hostForPattern(host, port)} is not allowed (${denial.reason}); ${denial.hint}`;
}
