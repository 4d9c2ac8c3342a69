// Child process for the D-4 lock tests: one updateSettings that stays inside the lock until told.
//   holderChild.ts <stateDir> <expectedRevision> <name> <releaseFile>
// Turns skill <name> off; prints "holding" once inside the lock, then waits there until
// <releaseFile> exists; prints "wrote" or "conflict" after.
import { existsSync, writeSync } from "node:fs";
import { isAppError } from "../../../src/errors/index.js";
import { globalSettingsTarget, patchSkills, updateSettings } from "../../../src/settings/index.js";

/** Pause between two looks at the release file; the mutation is synchronous, so the wait is too. */
const RELEASE_POLL_MS = 5;

const [stateDir, expectedRevision, name, releaseFile] = process.argv.slice(2);
if (!stateDir || !expectedRevision || !name || !releaseFile) throw new Error("usage: holderChild.ts <stateDir> <expectedRevision> <name> <releaseFile>");
const pause = new Int32Array(new SharedArrayBuffer(4));
try {
  await updateSettings(globalSettingsTarget(stateDir), (current) => {
    writeSync(1, "holding\n");
    while (!existsSync(releaseFile)) Atomics.wait(pause, 0, 0, RELEASE_POLL_MS);
    return patchSkills(current, { off: [name] });
  }, { expectedRevision });
  writeSync(1, "wrote\n");
} catch (error) {
  if (!isAppError(error, "conflict")) throw error;
  writeSync(1, "conflict\n");
}
