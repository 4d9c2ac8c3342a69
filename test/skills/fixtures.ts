import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Writes a file, creating its parent directories. */
export function writeFile(path: string, content: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** The five S-1 roots for a layout of workspace/home/install under one temp base. */
export function layout(base: string): { workspace: string; home: string; install: string } {
  const workspace = join(base, "ws");
  const home = join(base, "home");
  const install = join(base, "install");
  for (const dir of [workspace, home, install]) mkdirSync(dir, { recursive: true });
  return { workspace, home, install };
}
