#!/usr/bin/env node
// Writes what is generated from the daemon's HTTP contract, from the built runtime (`npm run openapi`
// builds first): docs/openapi.json, the API as OpenAPI 3.1, and web/src/generated/contract.ts, the
// web page's copy in plain TypeScript. Commit both: test/daemon/openapi.test.ts and
// test/api/pageContract.test.ts check they are current.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OPENAPI_FILE, openApiDocument } from "../dist/src/api/openapi.js";
import { PAGE_CONTRACT_FILE, pageContract } from "../dist/src/api/pageContract.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
writeFileSync(join(root, OPENAPI_FILE), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
process.stderr.write(`albedo: wrote ${OPENAPI_FILE}\n`);
mkdirSync(dirname(join(root, PAGE_CONTRACT_FILE)), { recursive: true });
writeFileSync(join(root, PAGE_CONTRACT_FILE), pageContract());
process.stderr.write(`albedo: wrote ${PAGE_CONTRACT_FILE}\n`);
