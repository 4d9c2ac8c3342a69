/**
 * `albedo web`: opens the web console in a browser through a one-time login link, starting a daemon
 * if none runs. The link's fragment holds a code the page trades once for a login (a page secret
 * and a cookie); the daemon's token never leaves this machine's files.
 */
import { spawn } from "node:child_process";
import { API } from "../../api/index.js";
import { CliFailure, UsageError } from "../plumbing/args.js";
import type { CliCommand, CliIO } from "../plumbing/command.js";
import { daemonFor } from "../plumbing/daemonAccess.js";

/** What opens a URL in the desktop's browser, per platform; `$BROWSER` comes first when set. */
const OPENERS: Readonly<Partial<Record<NodeJS.Platform, string>>> = { linux: "xdg-open", darwin: "open", freebsd: "xdg-open" };

/** How long the opener (xdg-open, open, $BROWSER) may take to say whether it opened the page; a browser it starts lives on. */
const OPENER_WAIT_MS = 5_000;

/**
 * Runs `command url` and waits for it, at most OPENER_WAIT_MS: true when it exited 0 (or still
 * runs, which a browser started in the foreground does), false when it cannot be started or
 * failed (xdg-open without a display). Waiting reaps it, so no zombie is left behind.
 */
function openInBrowser(command: string, url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, [url], { env, detached: true, stdio: "ignore" });
    const timer = setTimeout(() => {
      child.unref();
      resolve(true);
    }, OPENER_WAIT_MS);
    child.once("error", () => (clearTimeout(timer), resolve(false)));
    child.once("exit", (code) => (clearTimeout(timer), resolve(code === 0)));
  });
}

/** Whether a graphical session can show a browser: no opener is tried on a Linux without DISPLAY or WAYLAND_DISPLAY, unless $BROWSER names one. */
function hasDisplay(env: NodeJS.ProcessEnv): boolean {
  if (env.BROWSER || process.platform !== "linux") return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
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
    if (!hasDisplay(io.env)) {
      io.stdout.write(`${link}\n`);
      io.stderr.write(`albedo web: no display here (DISPLAY and WAYLAND_DISPLAY are unset), so no browser was opened; open the link above in a browser on this machine (${expires})\n`);
      return 0;
    }
    if (!(await openInBrowser(opener, link, io.env))) {
      io.stdout.write(`${link}\n`);
      io.stderr.write(`albedo web: ${opener} could not open a browser; open the link above yourself (${expires})\n`);
      return 0;
    }
    io.stderr.write(`albedo web: opened the console at ${daemon.info.url} in your browser (${opener}); if nothing appeared, run \`albedo web --no-browser\` and open its link\n`);
    return 0;
  },
};
