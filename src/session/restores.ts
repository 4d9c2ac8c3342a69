import type { Disposable } from "../platform/index.js";
import { CHECKPOINT_DIR_ENV, CHECKPOINT_RESTORE_ENV } from "../bridge/index.js";
import { AppError } from "../errors/index.js";
import { readRestoreReport, type RestoreReport, type RestoreTrigger } from "./checkpoints.js";
import { RESTORE_SETTLE_MS } from "./limits.js";
import type { SessionRestores } from "./port.js";

/**
 * A session's kernel starts and its checkpoint (K-15): what each start restores for, the report
 * the kernel wrote of the last restore, and who hears of it. The first start restores only for a
 * resume; after it, a start is the supervisor's, after a death, and restores; a restart the user
 * asks for restores when asked to.
 */
export class KernelRestores implements SessionRestores {
  /** What the next kernel start restores for; undefined: it starts empty. */
  private nextStart: RestoreTrigger | undefined;
  /** The restore the kernel being started runs, until it is ready and its report read. */
  private starting: RestoreTrigger | undefined;
  private lastReport: RestoreReport | undefined;
  private told: RestoreReport | undefined;
  private readonly observers = new Set<(report: RestoreReport) => void>();
  /** Set while the kernel is dead and the supervisor's restart (which restores) has not reported. */
  private dead = false;
  private readonly settling = new Set<() => void>();

  /** `dir`: the directory the session's kernel writes its checkpoint into; undefined when checkpoints are off. */
  constructor(private readonly dir: string | undefined, resume: boolean) {
    this.nextStart = resume ? "resume" : undefined;
  }

  get enabled(): boolean {
    return this.dir !== undefined;
  }

  get last(): RestoreReport | undefined {
    return this.lastReport;
  }

  /** The checkpoint variables of one kernel start: where to write, and whether to load first. */
  startEnv(): Record<string, string> {
    if (this.dir === undefined) return {};
    const trigger = this.nextStart;
    this.starting = trigger;
    // Unless the user asks otherwise, the next start is the supervisor's, after a death: it restores.
    this.nextStart = "crash";
    return { [CHECKPOINT_DIR_ENV]: this.dir, [CHECKPOINT_RESTORE_ENV]: trigger !== undefined ? "1" : "0" };
  }

  /** A kernel start finished: when it restored, its report is read (as JSON, never a pickle) and told. */
  started(): void {
    this.dead = false;
    for (const settle of [...this.settling]) settle();
    const trigger = this.starting;
    this.starting = undefined;
    if (trigger === undefined || this.dir === undefined) return;
    const report = readRestoreReport(this.dir, trigger);
    this.lastReport = report;
    for (const observer of this.observers) observer(report);
  }

  /** Before a restart the user asked for: it restores only when `restore`. Throws AppError conflict for a restore without checkpoints. */
  beforeRestart(restore: boolean): void {
    if (restore && this.dir === undefined) {
      throw new AppError("conflict", "this session does not checkpoint its kernel (kernel.checkpoints is false), so there is nothing to restore");
    }
    this.nextStart = restore ? "restart" : undefined;
    this.lastReport = undefined;
  }

  /** The kernel died: the supervisor's restart restores it, and a turn waits for its report (settled). */
  died(): void {
    if (this.dir !== undefined) this.dead = true;
  }

  settled(): Promise<void> {
    if (!this.dead) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        // Once waited for, a kernel left dead is not waited for again.
        this.dead = false;
        clearTimeout(timer);
        this.settling.delete(done);
        resolve();
      };
      // A kernel the supervisor left dead (its restart cap) never reports: the turn goes on untold.
      const timer = setTimeout(done, RESTORE_SETTLE_MS);
      this.settling.add(done);
    });
  }

  observe(observer: (report: RestoreReport) => void): Disposable {
    this.observers.add(observer);
    return { dispose: () => void this.observers.delete(observer) };
  }

  takeNotice(): string | undefined {
    const report = this.lastReport;
    if (report === undefined || this.told === report) return undefined;
    this.told = report;
    return report.summary;
  }
}
