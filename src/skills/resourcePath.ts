import { AppError } from "../errors/index.js";
import { MAX_RESOURCE_DEPTH, MAX_RESOURCE_PATH_LENGTH } from "./limits.js";


/**
 * Checks a resource path as written, touching no disk, and returns its segments.
 * Throws AppError "invalid_params" unless it is a non-empty relative `/`-separated path with no
 * empty, `.` or `..` segment, NUL byte or backslash; "limit_exceeded" when it is longer than
 * MAX_RESOURCE_PATH_LENGTH or nests deeper than MAX_RESOURCE_DEPTH directories.
 */
export function checkResourcePath(resource: unknown): string[] {
  if (typeof resource !== "string") throw refused(`resource must be a string, got ${typeof resource}`);
  if (resource.length === 0) throw refused("resource must be a non-empty relative path");
  if (resource.length > MAX_RESOURCE_PATH_LENGTH) {
    throw new AppError(
      "limit_exceeded",
      `resource path is ${resource.length} characters; the limit is MAX_RESOURCE_PATH_LENGTH = ${MAX_RESOURCE_PATH_LENGTH}`,
      { limit: "MAX_RESOURCE_PATH_LENGTH", value: resource.length },
    );
  }
  if (resource.includes("\0")) throw refused(`resource ${quoted(resource)} contains a NUL byte`);
  if (resource.includes("\\")) throw refused(`resource ${quoted(resource)} contains a backslash; use "/" between segments`);
  if (resource.startsWith("/")) throw refused(`resource ${quoted(resource)} is absolute; give a path relative to the skill directory`);
  const segments = resource.split("/");
  for (const segment of segments) {
    if (segment === "") throw refused(`resource ${quoted(resource)} has an empty segment`);
    if (segment === "..") throw refused(`resource ${quoted(resource)} climbs out with ".."`);
    // "." is harmless to the OS but would give one file two names; listing never produces it.
    if (segment === ".") throw refused(`resource ${quoted(resource)} has a "." segment; write the path without it`);
  }
  if (segments.length - 1 > MAX_RESOURCE_DEPTH) {
    throw new AppError(
      "limit_exceeded",
      `resource ${quoted(resource)} is ${segments.length - 1} directories deep; the limit is MAX_RESOURCE_DEPTH = ${MAX_RESOURCE_DEPTH}`,
      { limit: "MAX_RESOURCE_DEPTH", value: segments.length - 1 },
    );
  }
  return segments;
}

/** The path as shown in a refusal (made only for one: a read that passes never pays for it). */
function quoted(resource: string): string {
  return JSON.stringify(resource);
}

function refused(message: string): AppError {
  return new AppError("invalid_params", message);
}
