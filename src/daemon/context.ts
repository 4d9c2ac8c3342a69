import type { OperationsStore } from "../operations/index.js";
import type { LogStats } from "./log.js";
import type { SessionDirectory } from "./sessionPort.js";
import type { WebLogins } from "./webLogins.js";

/** What route handlers share within one daemon. */
export interface DaemonContext {
  readonly stateDir: string;
  readonly install: string | undefined;
  readonly registry: SessionDirectory;
  readonly store: OperationsStore;
  readonly logStats: (() => LogStats) | undefined;
  /** The web console's login links and cookies. */
  readonly web: WebLogins;
}
