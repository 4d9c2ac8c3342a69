/**
 * The network policy of sandboxed kernels (N-1..N-4, N-6): the `network` setting's schema, the
 * policy compiled from it, the presets shipped in the install, the egress proxy one session's
 * kernel reaches through a Unix socket, the local CA that lets the proxy add secret headers, and
 * a session's egress (its proxy, its current policy, its records). The proxy reads the policy
 * through a getter on every new connection, so swapping the compiled policy the getter returns is
 * how a running session's policy changes.
 */
export { checkNetworkSetting, NetworkSettingSchema, type NetworkSetting } from "./schema.js";
export { compilePolicy, type NetworkPolicy } from "./policy.js";
export { PRESETS } from "./presets.js";
export { startEgressProxy, EgressProxyError, type EgressProxy, type EgressProxyOptions } from "./proxy.js";
export type { ConnectionRecord } from "./record.js";
export type { Resolver } from "./resolve.js";
export { openLocalCa, LocalCaError, CA_BUNDLE_FILE, type LocalCa } from "./ca.js";
export { describeNetwork, editNetworkSetting, NetworkEditError } from "./edit.js";
export { egressEnv, SessionEgress, type EgressCounts, type NumberedRecord } from "./egress.js";
export { MAX_RECORDS_PAGE } from "./limits.js";
export { DenialLines, type DenialNotice } from "./denials.js";
