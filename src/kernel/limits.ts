/** Bounds and deadlines of the Jupyter client (K-1, K-2, K-9): defined once, each tested at its edge. */

/** How long an interrupt waits for the kernel to begin the execution it is for; then it is sent anyway. */
export const INTERRUPT_BEGIN_TIMEOUT_MS = 5_000;
/** How long a shell request other than execute (kernel_info, complete, inspect) waits for its reply. */
export const SHELL_REQUEST_TIMEOUT_MS = 30_000;
/** How long a message-mode interrupt waits for the kernel's interrupt_reply. */
export const INTERRUPT_REPLY_TIMEOUT_MS = 5_000;
/** Bytes of the random HMAC-SHA256 key of each kernel's connection file. */
export const KEY_BYTES = 32;
/** Outputs kept for the async iterator while it does not drain them; older ones are dropped beyond this. */
export const MAX_PENDING_OUTPUTS = 10_000;
/**
 * How long an execution that went idle waits for its execute_reply. ipykernel sends the reply before
 * it publishes idle, so only a dropped reply takes this long: a KeyboardInterrupt raised inside
 * ipykernel's own request code ("KeyboardInterrupt caught in kernel") ends the request with no reply.
 */
export const REPLY_AFTER_IDLE_GRACE_MS = 5_000;
/** How often the heartbeat pings the kernel. */
export const HEARTBEAT_INTERVAL_MS = 1_000;
/** Pings in a row without an answer after which the kernel counts as dead. */
export const HEARTBEAT_MISSES = 3;
/** How long a kernel may take from launch to ready (kernel_info_reply and iopub welcome). */
export const KERNEL_READY_TIMEOUT_MS = 60_000;
/** ipykernel may drop a kernel_info_request that arrives while it is still starting; ask again this often. */
export const KERNEL_INFO_RETRY_MS = 1_000;
/** The shutdown ladder's first rung: how long a kernel may take to exit after shutdown_request. */
export const SHUTDOWN_REPLY_TIMEOUT_MS = 5_000;
/** Largest kernel.json read, in bytes. */
export const MAX_KERNEL_JSON_BYTES = 64 * 1024;
/** Most kernelspec directories examined in one listing. */
export const MAX_KERNELSPECS = 256;
/** The ladder's second rung: how long after SIGTERM before SIGKILL. */
export const SIGTERM_TIMEOUT_MS = 3_000;
/** The ladder's last rung: how long to wait for the process to be gone after SIGKILL. */
export const SIGKILL_TIMEOUT_MS = 2_000;
/** Lines of the kernel's stderr kept to explain a failed start or a death. */
export const MAX_STDERR_TAIL_LINES = 20;
/** Restarts of a dead kernel within RESTART_WINDOW_MS before the supervisor gives up. */
export const MAX_AUTO_RESTARTS = 3;
/** The window MAX_AUTO_RESTARTS counts restarts in. */
export const RESTART_WINDOW_MS = 60_000;
/**
 * Bytes of one message a kernel sends on shell, control, stdin or iopub, set as ZeroMQ's
 * ZMQ_MAXMSGSIZE on the sockets that receive from it: a larger message is never received (nothing
 * in the runtime allocates it, where a kernel writing on its own socket could otherwise hand the
 * daemon hundreds of megabytes at a time). ZeroMQ then drops that connection; the client connects
 * it again at once and says so on the execution running. Above any output a kernel sends in the
 * normal way: a stream flush (STREAM_TEXT_BYTES), an image (MAX_IMAGE_BYTES as base64), a bundle
 * or traceback cut on arrival to MAX_OUTPUT_MESSAGE_BYTES.
 */
export const MAX_KERNEL_MESSAGE_BYTES = 64 * 1024 * 1024;
/**
 * Messages ZeroMQ queues for the runtime on each socket that receives from a kernel (ZMQ_RCVHWM; its
 * default is 1000 messages, whatever their size). Beyond them ZeroMQ reads no more from the
 * connection: the rest waits in the kernel's own send queue, which drops past its own mark (the
 * kernel's loss). So a socket holds this many messages and the one ZeroMQ read before it found the
 * queue full: four kernels flooding 60 MiB messages took the daemon to a 5.2 GB peak with the
 * default, all of it in these queues.
 */
export const KERNEL_RECEIVE_HIGH_WATER_MARK = 1;
/**
 * Bytes of one message a kernel sends on shell (ZMQ_MAXMSGSIZE there, as MAX_KERNEL_MESSAGE_BYTES is
 * on iopub): the replies to execute, kernel_info, complete and inspect requests. As much as iopub
 * takes, because an execute reply that failed carries the error whole (name, value and traceback,
 * as the error output on iopub does), and an inspect reply a docstring bundle. A larger one is
 * dropped like a message over MAX_KERNEL_MESSAGE_BYTES; the process-wide budget bounds them all.
 */
export const MAX_KERNEL_REPLY_BYTES = MAX_KERNEL_MESSAGE_BYTES;
/**
 * Bytes of one message a kernel sends on control or stdin (ZMQ_MAXMSGSIZE there): an interrupt or
 * shutdown reply, an input prompt.
 */
export const MAX_KERNEL_CONTROL_MESSAGE_BYTES = 1024 * 1024;
/**
 * Bytes of kernel messages ZeroMQ holds for one session at most, however fast its kernel sends: on
 * each receiving socket KERNEL_RECEIVE_HIGH_WATER_MARK messages queued and one more read, each
 * within that socket's bound (iopub MAX_KERNEL_MESSAGE_BYTES, shell MAX_KERNEL_REPLY_BYTES, control
 * and stdin MAX_KERNEL_CONTROL_MESSAGE_BYTES). Messages are taken from the queues and decoded one at
 * a time for all sessions together (a decode holds a few copies of one message while it runs).
 */
export const MAX_KERNEL_QUEUED_BYTES_PER_SESSION =
  (KERNEL_RECEIVE_HIGH_WATER_MARK + 1) * (MAX_KERNEL_MESSAGE_BYTES + MAX_KERNEL_REPLY_BYTES + 2 * MAX_KERNEL_CONTROL_MESSAGE_BYTES);
/**
 * Bytes of kernel messages the runtime holds for all local kernels together (see KernelByteBudget):
 * the messages taken in whose frames are still alive, and what ZeroMQ still queues behind them.
 * Past it, the kernel whose messages hold the most is cut (its sockets closed, the kernel counted
 * as lost with the reason), never a quiet one: a few kernels flooding at once cannot take the
 * daemon further, however many sessions are open.
 */
export const MAX_KERNEL_BYTES_IN_FLIGHT = 512 * 1024 * 1024;
/** Bytes of a heartbeat's answer: the kernel echoes the few bytes of each ping. */
export const MAX_HEARTBEAT_REPLY_BYTES = 1024;
/**
 * How long after a kernel socket's disconnect the client waits for ZeroMQ to say it reconnects
 * (it does at once when the kernel closed the connection); without that word, ZeroMQ dropped the
 * connection for a message over MAX_KERNEL_MESSAGE_BYTES and will not reconnect it by itself.
 */
export const KERNEL_RECONNECT_CHECK_MS = 100;
/**
 * How long an execution whose execute_reply came waits for its idle status after the last message
 * for it on iopub: ipykernel publishes idle right after the reply, so only an idle lost waits this
 * long, with a connection dropped for a message over MAX_KERNEL_MESSAGE_BYTES or by a kernel whose
 * own send queue overflowed in a flood (KERNEL_RECEIVE_HIGH_WATER_MARK).
 */
export const LOST_IDLE_GRACE_MS = 5_000;
/** Bytes of one output's content as JSON (a stream chunk, a display bundle, a traceback); a larger one is cut with a marker. */
export const MAX_OUTPUT_MESSAGE_BYTES = 2 * 1024 * 1024;
/** Bytes of outputs a future keeps for an iterator that has not read them; the oldest go first past it. */
export const MAX_PENDING_OUTPUT_BYTES = 16 * 1024 * 1024;
/** Room a cut stream text leaves below MAX_OUTPUT_MESSAGE_BYTES for its JSON, escapes and the marker line. */
const STREAM_MARKER_ROOM_BYTES = 64 * 1024;
/**
 * UTF-8 bytes of text one stream message of an albedo kernel carries: its stdout and stderr keep
 * this much of each flush and send only the count of the rest (DROPPED_BYTES_METADATA), so a print
 * of hundreds of megabytes never crosses the socket, where it would arrive as one message, whole.
 */
export const STREAM_TEXT_BYTES = MAX_OUTPUT_MESSAGE_BYTES - STREAM_MARKER_ROOM_BYTES;
