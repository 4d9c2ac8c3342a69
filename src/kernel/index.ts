/** The kernel domain's public surface: start, talk to, supervise and stop one Jupyter kernel. */
export { startKernel, KernelClient } from "./client.js";
export { ExecuteFuture, MISSING_REPLY_ENAME } from "./future.js";
export { MAX_OUTPUT_MESSAGE_BYTES, MAX_PENDING_OUTPUT_BYTES, REPLY_AFTER_IDLE_GRACE_MS, STREAM_TEXT_BYTES } from "./limits.js";
export { headerDateMs, type ExecuteTimes } from "./timeline.js";
export { DROPPED_BYTES_METADATA, outputDropMarker, outputPayloadBytes } from "./outputs.js";
export { kernelMessages } from "./messages.js";
export { CONNECTION_FILE_PLACEHOLDER, substituteConnectionFile } from "./launcher.js";
export { channelAddress, CHANNELS, type ChannelName } from "./connection.js";
export { KernelStartError } from "./errors.js";
export { RestartPolicy, superviseKernel } from "./supervisor.js";
export { findKernelSpec, jupyterDataDir, KernelSpecError, listKernelSpecs, resolveKernelLaunch, type ResolvedKernelLaunch } from "./kernelspecs.js";
export type {
  ExecuteOptions,
  ExecuteOutput,
  ExecuteReply,
  InputHandler,
  Kernel,
  KernelLaunch,
  KernelLaunchSpec,
  KernelWrap,
  KernelStatus,
  StartKernelOptions,
  StatusEvent,
} from "./kernel.js";
export {
  RemoteKernelClient,
  startRemoteKernel,
  RpcComm,
  RPC_COMM_TARGET,
  RPC_REPLY_MEMBER,
  RPC_REPLY_SUBSHELL,
  type ReplyRoute,
  bootstrapKernel,
  checkKernelInfo,
  packageSources,
  RemoteKernelError,
  serverSettings,
  RemoteSettingsError,
  remoteSettingsProblems,
  remoteUrlProblem,
  resolveRemoteKernel,
  type RemoteKernelOptions,
  type RemoteKernelSettings,
  type RemoteOverride,
  remoteDoctor,
  registerCallback,
  type CallbackRegistration,
  captureServicesConsole,
  MIN_IPYKERNEL_VERSION,
  REMOTE_PACE_PER_S,
  REMOTE_PACE_BURST,
  CALLBACK_CONNECT_TIMEOUT_MS,
} from "./remote/index.js";
