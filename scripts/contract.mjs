#!/usr/bin/env node
// Writes kernel/albedo/_contract.py, the kernel package's copy of the kernel bridge, from the built
// runtime (`npm run contract` builds first). Commit the result: test/bridge checks it is current.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PYTHON_CONTRACT_FILE, pythonContract } from "../dist/src/api/pythonContract.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
writeFileSync(join(root, PYTHON_CONTRACT_FILE), pythonContract());
process.stderr.write(`albedo: wrote ${PYTHON_CONTRACT_FILE}\n`);
