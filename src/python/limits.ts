/** Bounds of the extra packages `albedo setup` installs (`--with`, `python.packages`). */

/** Requirements in one list: `--with`, or the `python.packages` setting. */
export const MAX_EXTRA_PACKAGES = 64;
/** Characters of one requirement string, such as `pandas[performance]>=2.2,<3`. */
export const MAX_PACKAGE_REQUIREMENT_LENGTH = 200;
