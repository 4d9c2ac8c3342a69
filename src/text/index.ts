/** Text as the program shows it to people and models: names the file system holds, control characters, layout for a terminal. */
export { bytePrefix, escapeInvalidUtf8 } from "./utf8.js";
export { GatheredText } from "./gathered.js";
export { jsonWithoutControls, stripAnsi, visibleControls } from "./controls.js";
export { closeNames, didYouMean } from "./closest.js";
export { cut, hangingRow, MAX_TEXT_COLUMNS, MIN_TEXT_COLUMNS, shortRevision, table, TERMINAL_COLUMNS, textColumns, wrap } from "./layout.js";
