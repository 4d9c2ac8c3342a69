/** Remote kernels (K-12): a kernel on a Jupyter Server or Enterprise Gateway behind the `Kernel` interface, and its comm RPC channel. */
export { RemoteKernelClient, startRemoteKernel, type RemoteKernelStartOptions } from "./client.js";
export { RpcComm, RPC_COMM_TARGET, RPC_REPLY_MEMBER, RPC_REPLY_SUBSHELL, type ReplyRoute, type RpcCommOptions } from "./comm.js";
export { bootstrapKernel, checkKernelInfo, packageSources, secretDigest, TOO_OLD_ENAME } from "./bootstrap.js";
export { RemoteKernelError, type RemoteKernelErrorCode } from "./errors.js";
export { serverSettings } from "./server.js";
export {
  DEFAULT_REMOTE_KERNEL_NAME, DEFAULT_TOKEN_ENV, KERNEL_USERNAME_ENV, REMOTE_ENV_PREFIX, RemoteSettingsError,
  remoteSettingsProblems, remoteUrlProblem, resolveRemoteKernel,
  type RemoteKernelOptions, type RemoteKernelSettings, type RemoteOverride, type RemoteCallback,
} from "./settings.js";
export * from "./limits.js";
export { remoteDoctor, type RemoteCheck } from "./doctor.js";
export { registerCallback, type CallbackConnected, type CallbackRegistration } from "./callback.js";
export { captureServicesConsole } from "./consoleNoise.js";
