/**
 * Kernel-facing methods declared once (K-5), the way the daemon declares its HTTP routes: a name,
 * a zod schema for the params, an optional deadline and the result type. The dispatcher validates
 * every call against its method's schema before the handler runs, and the kernel package's copy of
 * each method (its parameter names and defaults) is generated from the same declaration.
 */
import type { z } from "zod";
import { problemsOfIssues } from "../json/index.js";
import { AppError } from "../errors/index.js";
import type { CallContext, RouteSpec } from "./routes.js";

declare const resultType: unique symbol;
/** Carries a declaration's result type; nothing at run time. */
export interface Answers<R> {
  readonly [resultType]?: R;
}

/** The params of every method: a JSON object whose members the schema names (unknown members are refused). */
export type ParamsSchema = z.ZodObject;

/** One method as the table declares it. */
export interface RpcMethod<P extends ParamsSchema = ParamsSchema, R = unknown> {
  readonly name: string;
  /** One line: what it does. The kernel package uses it as the method's docstring. */
  readonly summary: string;
  readonly params: P;
  /** The method's own deadline instead of the server's default, in milliseconds. */
  readonly timeoutMs?: number;
  readonly result: Answers<R>;
}

/** Marks the result type of a declaration: `result: answers<ReadResult>()`. */
export function answers<R>(): Answers<R> {
  return {};
}

/** A handler of a declared method: gets the params as its schema parsed them. */
export type MethodHandler<P extends ParamsSchema, R> = (params: z.output<P>, context: CallContext) => R | PromiseLike<R>;

/** The route of a declared method: its handler, its deadline and its params' schema, which the dispatcher checks first. */
export function route<P extends ParamsSchema, R>(method: RpcMethod<P, R>, handler: MethodHandler<P, R>): RouteSpec & { readonly method: string } {
  return {
    method: method.name,
    handler: handler as RouteSpec["handler"],
    params: method.params,
    ...(method.timeoutMs === undefined ? {} : { timeoutMs: method.timeoutMs }),
  };
}

/** The params as `schema` parses them; throws AppError invalid_params naming each offending member. */
export function parseParams(method: string, schema: ParamsSchema, params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const problems = problemsOfIssues(parsed.error.issues);
  const text = problems.map((problem) => (problem.path === "" ? problem.message : `"${problem.path}": ${problem.message}`)).join("; ");
  throw new AppError("invalid_params", `${method}: ${text}`, { problems });
}

/** A parameter as the kernel package declares it: its name, and its default unless it is required. */
export type ParameterOf = { readonly name: string; readonly required: true } | { readonly name: string; readonly required: false; readonly default: unknown };

/** The parameters of `method` in declaration order: required, defaulted (with the default), or optional (default null: not sent). */
export function parametersOf(method: RpcMethod): ParameterOf[] {
  return Object.entries(method.params.shape).map(([name, field]) => {
    const def = (field as z.ZodType).def as { type: string; defaultValue?: unknown };
    if (def.type === "default") return { name, required: false, default: def.defaultValue };
    if (def.type === "optional") return { name, required: false, default: null };
    return { name, required: true };
  });
}
