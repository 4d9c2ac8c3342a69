import { describeModelSettings, sumUsage, type UsageTotals } from "../model/index.js";
import { globalSettingsTarget } from "../settings/index.js";
import type { SessionUsage } from "./port.js";
import type { SessionView } from "./view.js";

/** The tokens a session's turns used, as their endpoints reported them (O-10), and the model its settings name (O-7). */
export class ModelUsage implements SessionUsage {
  private sum: UsageTotals | undefined;

  constructor(private readonly currentView: () => SessionView, private readonly stateDir: string) {}

  get totals(): UsageTotals | undefined {
    return this.sum;
  }

  record(usage: UsageTotals): void {
    this.sum = this.sum === undefined ? usage : sumUsage(this.sum, usage);
  }

  model(): Record<string, unknown> {
    return describeModelSettings(this.currentView().selection.scopes, globalSettingsTarget(this.stateDir).file);
  }
}
