/** Resolves the Python interpreter the kernel contract tests launch ipykernel with. */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** $ALBEDO_PYTHON, else <repo>/.venv/bin/python; throws with a fix when neither exists. */
export function testPython(): string {
  const configured = process.env.ALBEDO_PYTHON;
  if (configured && configured.length > 0) return configured;
  const venv = join(REPO, ".venv", "bin", "python");
  if (existsSync(venv)) return venv;
  throw new Error(
    `no Python with ipykernel for the kernel tests: set ALBEDO_PYTHON or run \`albedo setup\` to create ${venv}`,
  );
}
