import { resolve } from "node:path";
import { EXTENSION_NAMES } from "../../src/bridge/index.js";
import { resolveRemoteKernel, type ExecuteFuture, type RemoteKernelClient } from "../../src/kernel/index.js";
import { RpcServer, type RouteTable } from "../../src/rpc/index.js";
import { startSessionRemoteKernel } from "../../src/session/remoteKernel.js";
import { makeRunDir } from "../rpc/helpers.js";
import type { JupyterServer } from "./jupyterServer.js";
import type { Log } from "../../src/platform/index.js";

export interface Cell {
  readonly msgId: string;
  readonly status: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly ename: string | undefined;
  readonly evalue: string | undefined;
}

/** An RpcServer with `routes` and a remote kernel joined to it through the comm, as a session joins them. */
export interface RemoteHarness {
  readonly rpc: RpcServer;
  readonly kernel: RemoteKernelClient;
  /** Runs `code` to the end. */
  run(code: string): Promise<Cell>;
  /** Starts `code`; resolves with its future once `marker` was printed. */
  start(code: string, marker: string): Promise<{ future: ExecuteFuture; cell: Promise<Cell> }>;
  close(): Promise<void>;
}

/** The session's remote-kernel wiring against a test route table; `url` overrides the server's (a proxy). */
export async function remoteHarness(server: JupyterServer, routes: RouteTable, options: { url?: string; callback?: string; log?: Log } = {}): Promise<RemoteHarness> {
  const run = makeRunDir();
  const rpc = new RpcServer({ runDir: run.dir, logger: () => {}, routes });
  await rpc.start();
  const remote = resolveRemoteKernel(options.callback ? { callback_url: options.callback } : undefined, { url: options.url ?? server.url }, { JUPYTER_TOKEN: server.token })!;
  let kernel: RemoteKernelClient;
  try {
    kernel = await startSessionRemoteKernel({
      remote, rpc, install: resolve("."), bridge: () => ({ ...rpc.kernelAccess(), extensions: EXTENSION_NAMES }),
      ...(options.log ? { log: options.log } : {}),
    });
  } catch (error) {
    await rpc.close();
    run.remove();
    throw error;
  }
  // As a session does: an interrupt also cancels the cell over the comm (an awaiting cell ignores SIGINT).
  kernel.onInterrupt((event) => event.msgId !== undefined && rpc.cancelCell(event.msgId, "the cell was interrupted"));
  const harness: RemoteHarness = {
    rpc, kernel,
    run: (code) => collect(kernel.execute(code)),
    start: async (code, marker) => {
      const future = kernel.execute(code);
      let printed!: () => void;
      const seen = new Promise<void>((done) => (printed = done));
      let out = "";
      future.onOutput((output) => {
        if (output.header.msg_type === "stream") out += (output.content as { text: string }).text;
        if (out.includes(marker)) printed();
      });
      const cell = collect(future);
      await Promise.race([seen, cell]);
      return { future, cell };
    },
    close: async () => {
      await kernel.shutdown();
      await rpc.close();
      run.remove();
    },
  };
  return harness;
}

/** Every output of `future` until it is done. */
export async function collect(future: ExecuteFuture): Promise<Cell> {
  let stdout = "";
  let stderr = "";
  let ename: string | undefined;
  let evalue: string | undefined;
  future.onOutput((output) => {
    const content = output.content as { name?: string; text?: string; ename?: string; evalue?: string; data?: Record<string, string> };
    if (output.header.msg_type === "stream") {
      if (content.name === "stderr") stderr += content.text ?? "";
      else stdout += content.text ?? "";
    }
    if (output.header.msg_type === "execute_result") stdout += `${content.data?.["text/plain"] ?? ""}\n`;
    if (output.header.msg_type === "error") ((ename = content.ename), (evalue = content.evalue));
  });
  const reply = await future.done;
  return { msgId: future.msgId, status: reply.status, stdout, stderr, ename, evalue };
}

