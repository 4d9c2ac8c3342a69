import { resolve } from "node:path";
import { CliFailure, stringOption, UsageError } from "../plumbing/args.js";
import { JSON_OPTION, writeJson, type CliCommand } from "../plumbing/command.js";
import { setupProgress } from "./setupProgress.js";
import { managedVenvDir, packagesProblem, setupPython, splitPackages, uniquePackages, venvPython, type SetupResult } from "../../python/index.js";
import { globalSettingsTarget, readSettings, SettingsFileError } from "../../settings/index.js";
import { stateDir } from "../../platform/index.js";

/** `--with`'s packages, then the global settings' `python.packages`, one per distribution; a bad `--with` is a usage error, a broken settings file a failure. */
async function wantedPackages(withOption: string | undefined, env: NodeJS.ProcessEnv): Promise<string[]> {
  const given = withOption === undefined ? [] : splitPackages(withOption);
  const problem = packagesProblem(given);
  if (problem !== undefined) throw new UsageError(`--with: ${problem}`);
  try {
    const { settings } = await readSettings(globalSettingsTarget(stateDir(env)));
    return uniquePackages([given, settings.python?.packages ?? []]);
  } catch (error) {
    if (error instanceof SettingsFileError) throw new CliFailure(`${error.message}; correct it (setup reads python.packages there) and run \`albedo setup\` again`);
    throw error;
  }
}

function summary(result: SetupResult, defaultVenv: boolean): string {
  const packages = result.packages.map((state) => `, ${state.name} ${state.version ?? "?"}`).join("");
  const versions = `ipykernel ${result.ipykernel ?? "?"}, pyzmq ${result.pyzmq ?? "?"}${packages}`;
  const seconds = (result.elapsedMs / 1000).toFixed(1);
  const hint = defaultVenv ? "" : `; to use it, set ALBEDO_PYTHON=${result.python}`;
  if (result.action === "already") return `albedo setup: already set up: ${result.venv} has ${versions}${hint}\n`;
  return `albedo setup: ready in ${seconds} s: ${result.venv} has ${versions}${hint}\n`;
}

export const setupCommand: CliCommand = {
  options: [
    { name: "python", value: "PATH", help: "interpreter that creates the venv (default: python3 on PATH)" },
    { name: "venv", value: "DIR", help: "venv directory (default: <install>/.venv)" },
    { name: "with", value: "PKGS", help: "also install these pip requirements, comma-separated (numpy,pandas)" },
    { name: "verbose", short: "v", help: "show pip's own output" },
    JSON_OPTION,
  ],
  async run(args, io) {
    const venvOption = stringOption(args, "venv");
    const basePython = stringOption(args, "python");
    const packages = await wantedPackages(stringOption(args, "with"), io.env);
    const result = await setupPython({
      env: io.env,
      packages,
      ...(venvOption !== undefined ? { venvDir: resolve(io.cwd, venvOption) } : {}),
      ...(basePython !== undefined ? { basePython: basePython.includes("/") ? resolve(io.cwd, basePython) : basePython } : {}),
      ...setupProgress(io, args.options.has("verbose")),
    });
    const isDefault = resolve(result.venv) === resolve(managedVenvDir());
    if (args.options.has("json")) {
      writeJson(io, { ...result, ...(isDefault ? {} : { hint: `ALBEDO_PYTHON=${venvPython(result.venv)}` }) });
    } else if (result.error) {
      io.stderr.write(`albedo setup: ${result.error.message}\n  fix: ${result.error.fix}\n`);
    } else {
      io.stdout.write(summary(result, isDefault));
    }
    return result.ok ? 0 : 1;
  },
};
