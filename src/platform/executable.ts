import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/** The absolute path of an executable named `name` on `searchPath`, or undefined when none is found. */
export function findExecutable(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? "").split(delimiter)) {
    if (dir.length === 0 || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      continue;
    }
  }
  return undefined;
}
