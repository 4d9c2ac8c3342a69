import { join } from "node:path";
import { newOperationId, OperationsStore, type AdmitInput, type CommandInput } from "../../../src/operations/index.js";
import { tempDirs } from "../../support/tempDirs.js";

/** 2025-01-01T00:00:00Z: the fixed start of every test clock. */
export const T0 = Date.UTC(2025, 0, 1);

/** A settable clock and stores opened on files in temp dirs; close() shuts and removes them all. */
export function storeFixture(): {
  clock: { now: number };
  open(file?: string, trace?: (sql: string) => void): { store: OperationsStore; file: string };
  dir(): string;
  close(): void;
} {
  const temps = tempDirs("albedo-operations-");
  const clock = { now: T0 };
  const stores: OperationsStore[] = [];
  return {
    clock,
    open(file?: string, trace?: (sql: string) => void) {
      const path = file ?? join(temps.make(), "albedo.db");
      const store = OperationsStore.open(path, { now: () => clock.now, ...(trace ? { trace } : {}) });
      stores.push(store);
      return { store, file: path };
    },
    dir: () => temps.make(),
    close() {
      for (const store of stores.splice(0)) {
        try {
          store.close();
        } catch {
          // already closed by the test
        }
      }
      temps.cleanup();
      clock.now = T0;
    },
  };
}

export function message(text: string, operationId: string = newOperationId(T0)): AdmitInput & { type: "message" } {
  return { operationId, type: "message", text };
}

export function demoCommand(args: string, instructions = "Merge the inputs carefully.", operationId: string = newOperationId(T0)): CommandInput {
  return {
    operationId,
    type: "command",
    command: "/demo",
    arguments: args,
    activation: { name: "demo", description: "A demo skill", source: "/ws/.albedo/skills/demo/SKILL.md", arguments: args.trim(), instructions },
  };
}
