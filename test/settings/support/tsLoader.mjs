// Lets a child process started by a test run the TypeScript sources directly:
//   node --import ./test/settings/support/tsLoader.mjs child.ts
// Node 20 cannot strip types itself, so the hooks transpile with the project's own `typescript`.
import { register } from "node:module";

register("./tsHooks.mjs", import.meta.url);
