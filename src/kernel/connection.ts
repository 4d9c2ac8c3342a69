/**
 * Connection info and the connection file the runtime writes for each kernel (K-1).
 * IPC follows ipykernel's convention: `ip` is a path prefix and each channel's socket file is
 * `<ip>-<port>`, so "ports" are just small distinct suffixes.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import type { KernelTransport } from "./kernel.js";
import { MAX_UNIX_SOCKET_PATH_BYTES } from "../platform/index.js";
import { KEY_BYTES } from "./limits.js";

export const TCP_LOOPBACK = "127.0.0.1";

export type ChannelName = "shell" | "iopub" | "stdin" | "control" | "hb";
export const CHANNELS: readonly ChannelName[] = ["shell", "iopub", "stdin", "control", "hb"];

/** The Jupyter connection file contents. */
export interface ConnectionInfo {
  readonly transport: KernelTransport;
  readonly ip: string;
  readonly shell_port: number;
  readonly iopub_port: number;
  readonly stdin_port: number;
  readonly control_port: number;
  readonly hb_port: number;
  readonly key: string;
  readonly signature_scheme: "hmac-sha256";
}

const IPC_PORTS: Readonly<Record<ChannelName, number>> = { shell: 1, iopub: 2, stdin: 3, control: 4, hb: 5 };

function portOf(info: ConnectionInfo, channel: ChannelName): number {
  return info[`${channel}_port`];
}

/** The ZeroMQ endpoint of one channel. */
export function channelAddress(info: ConnectionInfo, channel: ChannelName): string {
  const port = portOf(info, channel);
  return info.transport === "ipc" ? `ipc://${info.ip}-${port}` : `tcp://${info.ip}:${port}`;
}

/** The socket files an IPC kernel creates (empty for TCP). */
export function ipcSocketFiles(info: ConnectionInfo): string[] {
  return info.transport === "ipc" ? CHANNELS.map((channel) => `${info.ip}-${portOf(info, channel)}`) : [];
}

/** Creates `runDir` with mode 0700 when absent; throws when it exists and is not a directory. */
export async function ensureRunDir(runDir: string): Promise<void> {
  await mkdir(runDir, { recursive: true, mode: 0o700 });
  const info = await stat(runDir);
  if (!info.isDirectory()) throw new Error(`kernel run dir is not a directory: ${runDir}`);
}

/**
 * Fresh connection info with `key`, else a new random one. IPC sockets get a new random prefix
 * inside `runDir`; throws when the resulting socket paths exceed MAX_UNIX_SOCKET_PATH_BYTES.
 */
export async function newConnectionInfo(runDir: string, transport: KernelTransport, given?: string): Promise<ConnectionInfo> {
  const key = given ?? randomBytes(KEY_BYTES).toString("hex");
  if (transport === "tcp") {
    const [shell, iopub, stdin, control, hb] = await freeTcpPorts(CHANNELS.length);
    return { transport, ip: TCP_LOOPBACK, shell_port: shell!, iopub_port: iopub!, stdin_port: stdin!, control_port: control!, hb_port: hb!, key, signature_scheme: "hmac-sha256" };
  }
  const ip = join(runDir, `k${randomBytes(3).toString("hex")}`);
  const info: ConnectionInfo = {
    transport, ip, key, signature_scheme: "hmac-sha256",
    shell_port: IPC_PORTS.shell, iopub_port: IPC_PORTS.iopub, stdin_port: IPC_PORTS.stdin,
    control_port: IPC_PORTS.control, hb_port: IPC_PORTS.hb,
  };
  checkIpcPathLength(info);
  return info;
}

function checkIpcPathLength(info: ConnectionInfo): void {
  for (const path of ipcSocketFiles(info)) {
    const bytes = Buffer.byteLength(path);
    if (bytes > MAX_UNIX_SOCKET_PATH_BYTES) {
      throw new Error(
        `kernel IPC socket path is ${bytes} bytes, over MAX_UNIX_SOCKET_PATH_BYTES (${MAX_UNIX_SOCKET_PATH_BYTES}): ${path}; ` +
          "use a shorter run dir (or the tcp transport)",
      );
    }
  }
}

/** `count` distinct loopback ports that were free a moment ago (held open together so they differ). */
async function freeTcpPorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(0, TCP_LOOPBACK, () => resolve(server));
    })),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("loopback listener has no port");
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** The connection file's text. */
export function connectionText(info: ConnectionInfo): string {
  return JSON.stringify(info, null, 2) + "\n";
}

/** Writes the connection file with mode 0600 (refusing to overwrite) and returns its path. */
export async function writeConnectionFile(runDir: string, info: ConnectionInfo): Promise<string> {
  const path = join(runDir, `kernel-${randomBytes(4).toString("hex")}.json`);
  await writeFile(path, connectionText(info), { mode: 0o600, flag: "wx" });
  await chmod(path, 0o600);
  return path;
}

/** Removes the connection file (when there is one on disk) and any IPC socket files; missing files are fine. */
export async function removeConnectionFiles(connectionFile: string | undefined, info: ConnectionInfo): Promise<void> {
  const files = connectionFile === undefined ? ipcSocketFiles(info) : [connectionFile, ...ipcSocketFiles(info)];
  await Promise.all(files.map((path) => rm(path, { force: true })));
}
