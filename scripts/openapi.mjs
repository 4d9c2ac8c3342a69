#!/usr/bin/env node
// Writes docs/openapi.json, the daemon's API as OpenAPI 3.1, from the built runtime (`npm run
// openapi` builds first). Commit the result: test/daemon/openapi.test.ts checks it is current.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OPENAPI_FILE, openApiDocument } from "../dist/src/api/openapi.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
writeFileSync(join(root, OPENAPI_FILE), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
process.stderr.write(`albedo: wrote ${OPENAPI_FILE}\n`);
