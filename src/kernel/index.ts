/** The kernel domain's public surface: start, talk to, supervise and stop one Jupyter kernel. */
export { startKernel, KernelClient, SHELL_REQUEST_TIMEOUT_MS, INTERRUPT_REPLY_TIMEOUT_MS } from "./client.js";
export { ExecuteFuture, MAX_PENDING_OUTPUTS, MISSING_REPLY_ENAME, REPLY_AFTER_IDLE_GRACE_MS } from "./future.js";
export { ExecuteTimeline, headerDateMs, type ExecuteTimes } from "./timeline.js";
export { MAX_OUTPUT_MESSAGE_BYTES, MAX_PENDING_OUTPUT_BYTES, outputDropMarker } from "./outputs.js";
export { KERNEL_READY_TIMEOUT_MS, KERNEL_INFO_RETRY_MS, SHUTDOWN_REPLY_TIMEOUT_MS } from "./instance.js";
export { CONNECTION_FILE_PLACEHOLDER, SIGTERM_TIMEOUT_MS, SIGKILL_TIMEOUT_MS, substituteConnectionFile } from "./launcher.js";
export { HEARTBEAT_INTERVAL_MS, HEARTBEAT_MISSES } from "./heartbeat.js";
export { MAX_UNIX_SOCKET_PATH_BYTES } from "./connection.js";
export { KernelStartError, kernelDiedError } from "./errors.js";
export { RestartPolicy, superviseKernel, MAX_AUTO_RESTARTS, RESTART_WINDOW_MS } from "./supervisor.js";
export { PROTOCOL_VERSION } from "./messages.js";
export {
  findKernelSpec, KernelSpecError, kernelSpecDirs, listKernelSpecs, MAX_KERNEL_JSON_BYTES,
  MAX_KERNELSPECS, resolveKernelLaunch, type KernelSpec, type KernelSpecEntry, type ResolvedKernelLaunch,
} from "./kernelspecs.js";
export type {
  CompleteReply, Disposable, ExecuteOptions, ExecuteOutput, ExecuteReply, InputHandler, InterruptEvent, KernelInfo, Kernel,
  KernelLaunch, KernelLaunchSpec, KernelLog, KernelWrap, WrappedLaunch, KernelStatus, KernelTransport, LogLevel, StartKernelOptions, StatusEvent,
} from "./kernel.js";
export type { SupervisorEvents } from "./supervisor.js";
export * from "./remote/index.js";
