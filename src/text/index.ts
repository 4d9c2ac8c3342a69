/** Text as the program shows it to people and models: names the file system holds, control characters. */
export { escapeInvalidUtf8 } from "./utf8.js";
export { jsonWithoutControls, stripAnsi, visibleControls } from "./controls.js";
