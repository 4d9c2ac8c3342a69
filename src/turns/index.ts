/** Model turns (O-3..O-9): the loop, its tools, the conversation it carries and the rows it draws. */
export { loadPrompts } from "./context.js";
export { EMPTY_CONVERSATION, MemoryConversationStore, type ConversationImage, type ConversationState, type ConversationStore } from "./conversation.js";

export type { StoredRow } from "./rows.js";
export { runTurn, type TurnEnd, type TurnRequest } from "./runner.js";
export type { TurnHost } from "./tools/index.js";
export { boundToolText, skillText } from "./tools/index.js";
export { TurnWorker } from "./worker.js";
export { turnModel } from "./model.js";
export { renderMcpServers } from "./mcpContext.js";
export { resultImages, withImageBytes } from "./images.js";
export { MAX_IMAGES_IN_CONTEXT, MAX_TOOL_RESULT_BYTES } from "./limits.js";
