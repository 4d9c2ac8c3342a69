// bench/ still imports this path; the paths live in platform/ now.
export { installDir, homeDir, stateDir } from "../platform/index.js";
