// Child process for the O-2 restart test: admits inputs, starts one turn, then idles until killed.
//   admitChild.ts <dbFile> <sessionId> <count>
// Prints one JSON line per admission ({"input":...,"receipt":...}), then "running <turnId>".
import { newOperationId, OperationsStore, type AdmitInput } from "../../../src/operations/index.js";

const [file, sessionId, countArg] = process.argv.slice(2);
if (!file || !sessionId || !countArg) throw new Error("usage: admitChild.ts <dbFile> <sessionId> <count>");
const store = OperationsStore.open(file);
const turnIds: string[] = [];
for (let index = 0; index < Number(countArg); index += 1) {
  const input: AdmitInput =
    index % 2 === 0
      ? { operationId: newOperationId(), type: "message", text: `message ${index}` }
      : {
          operationId: newOperationId(),
          type: "command",
          command: "/demo",
          arguments: `run ${index}`,
          activation: { name: "demo", description: "d", source: "/skills/demo/SKILL.md", arguments: `run ${index}`, instructions: `step ${index}` },
        };
  const result = store.admit(sessionId, input);
  if (!result.ok) throw new Error(`admission refused: ${result.code}: ${result.detail}`);
  turnIds.push(result.receipt.turnId);
  process.stdout.write(JSON.stringify({ input, receipt: result.receipt }) + "\n");
}
store.markRunning(turnIds[0]!);
process.stdout.write(`running ${turnIds[0]!}\n`);
// Stay alive with the database open, as a daemon would, until the test kills this process.
setInterval(() => undefined, 1_000);
