// Child process for the D-4 tests: increments `counter` in a settings file through updateSettings.
//   counterChild.ts <stateDir> <count|forever> [padBytes]
// Prints "tick <n>" after each committed update; "done" at the end.
import { globalSettingsTarget, updateSettings, type Settings } from "../../../src/settings/index.js";

const [stateDir, countArg, padArg] = process.argv.slice(2);
if (!stateDir || !countArg) throw new Error("usage: counterChild.ts <stateDir> <count|forever> [padBytes]");
const target = globalSettingsTarget(stateDir);
const limit = countArg === "forever" ? Infinity : Number(countArg);
const pad = "x".repeat(Number(padArg ?? "0"));

for (let done = 0; done < limit; done += 1) {
  const next = await updateSettings(target, (current: Settings) => {
    const counter = typeof current.counter === "number" ? current.counter : 0;
    return { ...current, counter: counter + 1, pad, [`by${process.pid}`]: done + 1 };
  });
  process.stdout.write(`tick ${String(next.settings.counter)}\n`);
}
process.stdout.write("done\n");
