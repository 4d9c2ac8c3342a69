import { AppError } from "../errors/index.js";

/** Reads a required string parameter; throws AppError("invalid_params") otherwise. */
export function stringParam(params: Readonly<Record<string, unknown>>, name: string, method: string): string {
  const value = params[name];
  if (typeof value !== "string" || value.length === 0) {
    throw new AppError("invalid_params", `${method}: "${name}" must be a non-empty string`);
  }
  return value;
}

/** Reads an optional string parameter; absent or null is undefined. */
export function optionalString(params: Readonly<Record<string, unknown>>, name: string, method: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new AppError("invalid_params", `${method}: "${name}" must be a string`);
  return value;
}

/** Reads an optional non-negative safe integer parameter. */
export function optionalInt(params: Readonly<Record<string, unknown>>, name: string, method: string): number | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new AppError("invalid_params", `${method}: "${name}" must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Refuses parameters the method does not declare, so typos fail loudly. */
export function onlyParams(params: Readonly<Record<string, unknown>>, allowed: readonly string[], method: string): void {
  const unknown = Object.keys(params).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw new AppError("invalid_params", `${method}: unknown parameter ${unknown.map((k) => `"${k}"`).join(", ")}`);
}
