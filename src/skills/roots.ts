import { join, resolve } from "node:path";
import type { Scope } from "./types.js";
import { ALBEDO_DIR_NAME, installDir } from "../platform/index.js";

/** Where one discovery looks: the session's workspace, the user's home, the package install. */
export interface DiscoveryOptions {
  readonly workspace: string;
  readonly home: string;
  /** Defaults to installDir(). */
  readonly install?: string;
}

/** One directory whose immediate children are skill candidates (S-1). */
export interface DiscoveryRoot {
  readonly path: string;
  readonly scope: Scope;
  /** Position in precedence order, 0 first. */
  readonly index: number;
}

/** The five roots of S-1, in precedence order, as absolute installed paths. */
export function discoveryRoots(options: DiscoveryOptions): readonly DiscoveryRoot[] {
  const workspace = resolve(options.workspace);
  const home = resolve(options.home);
  const install = resolve(options.install ?? installDir());
  const layout: [string, Scope][] = [
    [join(workspace, ALBEDO_DIR_NAME, "skills"), "workspace"],
    [join(workspace, ".agents", "skills"), "workspace"],
    [join(home, ALBEDO_DIR_NAME, "skills"), "user"],
    [join(home, ".agents", "skills"), "user"],
    [join(install, "priv", "skills"), "builtin"],
  ];
  return layout.map(([path, scope], index) => ({ path, scope, index }));
}
