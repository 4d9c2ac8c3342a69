import { compilePolicy, describeNetwork, type EgressCounts, type NetworkSetting, type SessionEgress } from "../network/index.js";
import type { KernelPlan } from "./kernelPlan.js";
import type { SessionNetwork } from "./port.js";
import { projectNetworkNote } from "./sandbox.js";
import type { SessionView } from "./view.js";

/** The session's network as its resource shows it (see KernelNetwork.state). */
export interface NetworkState {
  readonly mode: "off" | "policy" | "open" | "unenforced";
  readonly text: string;
  readonly hosts: number;
  readonly from: "global" | "session";
  readonly setting: NetworkSetting;
  readonly counts: EgressCounts;
  readonly diagnostics: readonly string[];
}

/** What the session's kernel may reach (N-1) and, through its egress proxy, what it did (N-4). */
export class KernelNetwork implements SessionNetwork {
  constructor(
    private readonly plan: KernelPlan,
    private readonly where: { readonly workspace: string; readonly stateDir: string; readonly network?: NetworkSetting },
    private readonly currentView: () => SessionView,
  ) {}

  get egress(): SessionEgress | undefined {
    return this.plan.kind === "local" ? this.plan.egress : undefined;
  }

  state(): NetworkState {
    const view = this.currentView();
    const own = this.where.network;
    const global: NetworkSetting = own ?? view.selection.scopes.global?.network ?? false;
    const from = own === undefined ? "global" : "session";
    const note = projectNetworkNote({ ...this.where, view });
    const diagnostics = note === undefined ? [] : [note];
    const egress = this.egress;
    if (egress !== undefined) {
      const setting = egress.setting();
      const policy = compilePolicy(setting);
      return { mode: policy.mode, text: egress.describe(), hosts: policy.entries, from: egress.overridden ? "session" : "global", setting, counts: egress.totals(), diagnostics };
    }
    const counts = { allowed: 0, denied: 0, failed: 0, bytes: 0, dropped: 0 };
    const sandboxed = this.plan.kind === "local" && this.plan.sandbox.kind === "bwrap";
    if (sandboxed || global === true) return { mode: global === true ? "open" : "off", text: describeNetwork(global), hosts: 0, from, setting: global, counts, diagnostics };
    const where = this.plan.kind === "remote" ? "on its Jupyter Server" : this.plan.kind === "external" ? "outside albedo" : "unsandboxed";
    const text = `unenforced (the kernel runs ${where}, with that host's network)`;
    return { mode: "unenforced", text, hosts: 0, from, setting: global, counts, diagnostics };
  }
}
