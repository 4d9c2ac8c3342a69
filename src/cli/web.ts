/**
 * `albedo web`: opens the web console in a browser through a one-time login link, starting a daemon
 * if none runs. The link holds a code the daemon exchanges once for a login cookie; the daemon's
 * token never leaves this machine's files.
 */
import { spawn } from "node:child_process";
import { API } from "../daemon/index.js";
import { CliFailure, UsageError } from "./args.js";
import type { CliCommand, CliIO } from "./command.js";
import { daemonFor } from "./daemonAccess.js";

/** What opens a URL in the desktop's browser, per platform; `$BROWSER` comes first when set. */
const OPENERS: Readonly<Partial<Record<NodeJS.Platform, string>>> = { linux: "xdg-open", darwin: "open", freebsd: "xdg-open" };

/** Starts `command url` detached; resolves false when it cannot be started or fails at once. */
function openInBrowser(command: string, url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, [url], { env, detached: true, stdio: "ignore" });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}

export const webCommand: CliCommand = {
  options: [{ name: "no-browser", help: "print the one-time login link instead of opening a browser" }],
  async run(args, io: CliIO) {
    if (args.positionals.length > 0) throw new UsageError("takes no arguments");
    const daemon = await daemonFor(io, "albedo web");
    if (daemon.info.socket !== undefined) {
      throw new CliFailure(`the daemon listens on a Unix socket (${daemon.info.socket}), which a browser cannot reach; run \`albedo serve\` on TCP (the default) for the web console`);
    }
    const login = await daemon.call(API.createWebLogin);
    const link = `${daemon.info.url}${login.path}`;
    const expires = `it works once, until ${login.expires_at}`;
    const opener = io.env.BROWSER || OPENERS[process.platform];
    if (args.options.has("no-browser") || opener === undefined) {
      io.stdout.write(`${link}\n`);
      io.stderr.write(`albedo web: open this link in a browser on this machine; ${expires}\n`);
      return 0;
    }
    if (!(await openInBrowser(opener, link, io.env))) {
      io.stdout.write(`${link}\n`);
      io.stderr.write(`albedo web: could not run ${opener} to open a browser; open the link above yourself (${expires})\n`);
      return 0;
    }
    io.stderr.write(`albedo web: opened the console at ${daemon.info.url} in your browser (${opener}); if nothing appeared, run \`albedo web --no-browser\` and open its link\n`);
    return 0;
  },
};
