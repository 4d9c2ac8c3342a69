/**
 * How a session's kernel will run, decided before its first route table is built: on a Jupyter
 * Server, in a sandbox on this machine, unsandboxed, or outside albedo (a notebook's). The plan
 * carries the one guard the session's skill access binds in for its whole life, so no route table
 * ever exists without it.
 */
import { join } from "node:path";
import { resolveKernelLaunch, resolveRemoteKernel, type RemoteKernelOptions, type ResolvedKernelLaunch } from "../kernel/index.js";
import type { SessionEgress } from "../network/index.js";
import type { Sandbox } from "../sandbox/index.js";
import type { PathGuard } from "../skills/index.js";
import { SESSION_KERNEL_SCRIPT, withSessionKernelScript } from "./kernelArgv.js";
import { remoteReadGuard } from "./remoteKernel.js";
import { prepareKernelSandbox, type KernelSandboxInputs } from "./sandbox.js";
import type { SessionOptions } from "./session.js";
import type { SessionView } from "./view.js";

export type KernelPlan =
  | { readonly kind: "external" }
  | { readonly kind: "remote"; readonly remote: RemoteKernelOptions; readonly guard: PathGuard }
  | { readonly kind: "local"; readonly launch: ResolvedKernelLaunch; readonly sandbox: Sandbox; readonly egress?: SessionEgress };

/**
 * The plan for `options` over `view`. Only the global settings may choose the interpreter or a
 * server: the project file sits in the kernel-writable workspace. Throws what resolving the
 * interpreter, the remote settings or a required sandbox throws.
 */
export async function planKernel(
  options: SessionOptions, view: SessionView, runDir: string, install: string, warn: KernelSandboxInputs["warn"], checkpointDir?: string,
): Promise<KernelPlan> {
  if (options.kernel === "external") return { kind: "external" };
  const configured = view.selection.scopes.global?.kernel ?? {};
  const remote = resolveRemoteKernel(configured.remote, options.remote, options.env);
  if (remote) return { kind: "remote", remote, guard: remoteReadGuard({ ...options, install }, view) };
  const kernelspec = options.kernelspec ?? configured.kernelspec;
  const found = await resolveKernelLaunch({ ...(kernelspec ? { kernelspec } : {}), ...(configured.python ? { python: configured.python } : {}) }, options.env);
  const resolved = { ...found, argv: withSessionKernelScript(found.argv, join(install, "kernel", SESSION_KERNEL_SCRIPT)) };
  const { sandbox, launch, egress } = await prepareKernelSandbox(
    { ...options, runDir, install, mode: options.sandbox, view, warn, ...(options.log ? { log: options.log } : {}), ...(checkpointDir !== undefined ? { checkpointDir } : {}) },
    resolved,
  );
  return { kind: "local", launch, sandbox, ...(egress ? { egress } : {}) };
}

/** The guard the plan's kernel needs on runtime-served reads: none for an unsandboxed or external kernel (it could read those files itself). */
export function guardOf(plan: KernelPlan): PathGuard | undefined {
  if (plan.kind === "remote") return plan.guard;
  return plan.kind === "local" && plan.sandbox.kind === "bwrap" ? plan.sandbox.guard : undefined;
}

/** Releases what a plan holds (the sandbox's pinned descriptors and cgroup). */
export async function disposePlan(plan: KernelPlan | undefined): Promise<void> {
  if (plan?.kind !== "local") return;
  await plan.egress?.close();
  await plan.sandbox.dispose();
}
