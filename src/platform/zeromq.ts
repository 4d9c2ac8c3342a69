/**
 * zeromq, loaded the first time a socket is made rather than when a module imports it. Most
 * `albedo` commands never open a socket (help, `skills list`, settings over HTTP), and a process
 * that loaded zeromq ends by terminating its context, which on a busy machine can take long enough
 * for the native module to print a warning about queued messages at exit.
 */
import { createRequire } from "node:module";
import type * as Zeromq from "zeromq";

export type { Zeromq };

const require = createRequire(import.meta.url);
let loaded: typeof Zeromq | undefined;

/** The zeromq module; loads it on the first call. */
export function zeromq(): typeof Zeromq {
  loaded ??= require("zeromq") as typeof Zeromq;
  return loaded;
}
