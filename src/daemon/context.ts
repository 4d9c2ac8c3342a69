import type { OperationsStore } from "../operations/index.js";
import type { LogStats } from "./log.js";
import type { SessionRegistry } from "./registry.js";

/** What route handlers share within one daemon. */
export interface DaemonContext {
  readonly stateDir: string;
  readonly install: string | undefined;
  readonly registry: SessionRegistry;
  readonly store: OperationsStore;
  readonly logStats: (() => LogStats) | undefined;
}
