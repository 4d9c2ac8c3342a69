/** Bounds of the extra packages `albedo setup` installs (`--with`, `python.packages`). */

/** Requirements in one list: `--with`, or the `python.packages` setting. */
export const MAX_EXTRA_PACKAGES = 64;
/** Characters of one requirement string, such as `pandas[performance]>=2.2,<3`. */
export const MAX_PACKAGE_REQUIREMENT_LENGTH = 200;
/** Bytes read of a venv's record of the packages `albedo setup` installed into it. */
export const MAX_RECORDED_PACKAGES_BYTES = 64 * 1024;
