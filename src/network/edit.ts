/**
 * Changes to a `network` setting as `albedo network allow|deny` and the HTTP route make them, and
 * the one-line account of a setting that `doctor`, the console banner and a session show. An
 * edit returns a new setting, checked against the schema; it never touches `secrets`,
 * `presets` or `upstream_ca`.
 */
import { parsePattern } from "./patterns.js";
import { compilePolicy } from "./policy.js";
import { checkNetworkSetting, type NetworkPolicySetting, type NetworkSetting } from "./schema.js";

/** An edit the setting cannot take; the message names the pattern or the value. */
export class NetworkEditError extends Error {
  override readonly name = "NetworkEditError";
}

export interface NetworkEdit {
  /** Patterns to add to `allow` (and drop from `deny`). */
  readonly allow?: readonly string[];
  /** Patterns to add to `deny` (and drop from `allow`). */
  readonly deny?: readonly string[];
}

/**
 * `setting` with `edit` applied: `false` becomes a policy of the allowed patterns; a pattern
 * moves between the lists rather than standing in both. Throws NetworkEditError for a pattern
 * that is not one, for any edit of `true` (the kernel then has the host's network: there is
 * nothing to filter with), or when the result breaks a bound of the schema.
 */
export function editNetworkSetting(setting: NetworkSetting, edit: NetworkEdit): NetworkSetting {
  const allow = edit.allow ?? [];
  const deny = edit.deny ?? [];
  for (const text of [...allow, ...deny]) {
    const parsed = parsePattern(text);
    if (typeof parsed === "string") throw new NetworkEditError(parsed);
  }
  if (allow.length === 0 && deny.length === 0) return setting;
  if (setting === true) {
    throw new NetworkEditError("network is true (the host's network, unfiltered): there is no list to change; set a policy first (albedo network reset, then allow)");
  }
  const policy: NetworkPolicySetting = setting === false ? {} : setting;
  const without = (list: readonly string[] | undefined, drop: readonly string[]) => (list ?? []).filter((item) => !drop.includes(item));
  const merged = (list: readonly string[], add: readonly string[]) => [...new Set([...list, ...add])];
  const nextAllow = merged(without(policy.allow, deny), allow);
  const nextDeny = merged(without(policy.deny, allow), deny);
  const { allow: _a, deny: _d, ...rest } = policy;
  const next: NetworkPolicySetting = { ...rest, ...(nextAllow.length > 0 ? { allow: nextAllow } : {}), ...(nextDeny.length > 0 ? { deny: nextDeny } : {}) };
  const checked = checkNetworkSetting(next);
  if (!checked.ok) throw new NetworkEditError(checked.problems.map((problem) => `network.${problem.path}: ${problem.message}`).join("; "));
  return next;
}

/** What a setting lets a sandboxed kernel reach, in one line: `off`, `a policy of 3 hosts`, `open (the host's network, unfiltered: unsafe)`. */
export function describeNetwork(setting: NetworkSetting): string {
  const policy = compilePolicy(setting);
  if (policy.mode === "off") return "off (no host is reachable)";
  if (policy.mode === "open") return "open (the host's network, unfiltered: unsafe for model-written code)";
  const secrets = typeof setting === "object" ? Object.keys(setting.secrets ?? {}).length : 0;
  const hosts = `a policy of ${policy.entries} host${policy.entries === 1 ? "" : "s"}`;
  return secrets > 0 ? `${hosts}, ${secrets} with secrets` : hosts;
}
