/**
 * A session's kernel on a Jupyter Server (K-12): started through the kernel domain's remote client,
 * bootstrapped with the session's package source, and joined to the session's RPC server through
 * the comm `albedo.rpc`. The routes, limits, cancellation and reload are the RpcServer's, exactly as
 * for a local kernel; only the transport differs. Every boot (start, restart, a restart the server
 * made) bootstraps again and opens a new comm.
 */
import { realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { bridgeJson, type KernelBridge } from "../bridge/index.js";
import { bootstrapKernel, CALLBACK_CONNECT_TIMEOUT_MS, checkKernelInfo, packageSources, registerCallback, REMOTE_PACE_BURST, REMOTE_PACE_PER_S, RpcComm, startRemoteKernel, type CallbackRegistration, type RemoteKernelClient, type RemoteKernelOptions, type ReplyRoute } from "../kernel/index.js";
import type { AttachedPeer, RpcServer } from "../rpc/index.js";
import { discoveryRoots } from "../skills/index.js";
import { COMMAND_METHODS, MCP_METHODS } from "./rpcApi.js";
import type { SessionView } from "./view.js";
import { within, type Log } from "../platform/index.js";

/** Places on this machine no kernel should read through the runtime (the same list a sandbox hides). */
const HIDDEN_SYSTEM_PATHS = ["/tmp", "/run", "/proc", "/sys"];

export interface RemoteKernelInputs {
  readonly remote: RemoteKernelOptions;
  readonly rpc: RpcServer;
  /** The session's bridge record, read at each boot (the catalog and deadline follow reloads). */
  readonly bridge: () => KernelBridge;
  /** The runtime's install; the package source is read from `<install>/kernel`. */
  readonly install: string;
  readonly log?: Log;
}

/** Starts and bootstraps the session's remote kernel; throws RemoteKernelError (nothing is left on the server then). */
export async function startSessionRemoteKernel(inputs: RemoteKernelInputs): Promise<RemoteKernelClient> {
  const sources = await packageSources(join(inputs.install, "kernel"));
  const callback = await callbackFor(inputs);
  try {
    const kernel = await startJoined(inputs, sources, callback);
    if (callback) kernel.onStatus((event) => void (event.status === "stopped" && callback.close()));
    return kernel;
  } catch (error) {
    await callback?.close();
    throw error;
  }
}

/** The session's place on the callback listener (the fast path), when kernel.remote.callback_url is set. */
async function callbackFor(inputs: RemoteKernelInputs): Promise<CallbackRegistration | undefined> {
  const where = inputs.remote.callback;
  if (where === undefined) return undefined;
  let connections = 0;
  return registerCallback(where.host, where.port, (send) => {
    const peer = inputs.rpc.attachPeer(`callback/${(connections += 1)}`, send);
    return { receive: (body) => peer.receive(body), closed: () => peer.detach() };
  }, inputs.log);
}

async function startJoined(inputs: RemoteKernelInputs, sources: Record<string, string>, callback: CallbackRegistration | undefined): Promise<RemoteKernelClient> {
  let channel: { comm: RpcComm | undefined; peers: AttachedPeer[] } | undefined;
  // Each boot's peers get names of their own: a late reply to a call of the kernel before a restart must not reach its successor.
  let boots = 0;
  const closeChannel = () => {
    channel?.comm?.close();
    for (const peer of channel?.peers ?? []) peer.detach();
    channel = undefined;
  };
  return startRemoteKernel({
    remote: inputs.remote,
    ...(inputs.log ? { log: inputs.log } : {}),
    onBoot: async (kernel) => {
      closeChannel();
      checkKernelInfo(kernel.info);
      const bridge = inputs.bridge();
      await bootstrapKernel(kernel, sources, bridge.token);
      const current: { comm: RpcComm | undefined; peers: AttachedPeer[] } = { comm: undefined, peers: [] };
      const boot = (boots += 1);
      const peer = (route: ReplyRoute) => inputs.rpc.attachPeer(`${kernel.id}/${boot}/${route}`, (text) => current.comm?.send(text, route));
      const peers = { shell: peer("shell"), subshell: peer("subshell") };
      current.peers = [peers.shell, peers.subshell];
      channel = current;
      current.comm = await RpcComm.open({
        connection: kernel.connection,
        openData: {
          ...(await openData(inputs.rpc, bridge)),
          ...(callback && inputs.remote.callback ? { callback: { url: inputs.remote.callback.url, token: callback.token, connect_timeout_ms: CALLBACK_CONNECT_TIMEOUT_MS } } : {}),
        },
        onMessage: (body, route) => peers[route].receive(body),
        ...(inputs.log ? { log: inputs.log } : {}),
      });
    },
  });
}

/** The comm's open data: the secret, the bridge's bounds and extensions, the pacing, and the catalogs typed methods are made from. */
async function openData(rpc: RpcServer, bridge: KernelBridge): Promise<Record<string, unknown>> {
  const { endpoint: _endpoint, token: _token, ...bounds } = bridgeJson(bridge);
  const catalog = await served(rpc, COMMAND_METHODS.catalog.name);
  const mcp_catalog = await served(rpc, MCP_METHODS.catalog.name);
  return { secret: bridge.token, ...bounds, pace_per_s: REMOTE_PACE_PER_S, pace_burst: REMOTE_PACE_BURST, catalog, mcp_catalog };
}

/** What the current route table answers `method` with no params, or null when it does not serve it. */
async function served(rpc: RpcServer, method: string): Promise<unknown> {
  const route = rpc.routes.get(method);
  return route ? await route.handler({}, { method, cell: undefined, signal: new AbortController().signal, arrival: {} }) : null;
}

/**
 * The read guard of a session whose kernel is remote. Such a kernel can read nothing on this
 * machine by itself, so the runtime must not read for it what a sandbox would hide: the state dir,
 * the home (except the user skill roots and the skills found there) and the host's /tmp, /run,
 * /proc and /sys. A workspace skill that links out of the workspace is not followed there either.
 */
export function remoteReadGuard(where: { workspace: string; home: string; stateDir: string; install: string }, view: SessionView): (real: string) => boolean {
  const roots = discoveryRoots(where);
  const workspaceRoots = new Set(roots.filter((root) => root.scope === "workspace").map((root) => root.path));
  const exposed = [
    realOr(where.workspace),
    ...roots.filter((root) => root.scope !== "workspace").map((root) => realOr(root.path)),
    ...view.discovered.skills.filter((skill) => !workspaceRoots.has(dirname(skill.dir))).map((skill) => realOr(skill.dir)),
  ];
  const hidden = [realOr(where.stateDir), realOr(where.home), ...HIDDEN_SYSTEM_PATHS];
  return (real) => exposed.some((base) => within(real, base)) || !hidden.some((base) => within(real, base));
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

