/** Model turns (O-3..O-9): the loop, its tools, the conversation it carries and the rows it draws. */
export { loadPrompts, systemPrompt, PROMPT_FILES, type Prompts, type ToolMode } from "./context.js";
export { EMPTY_CONVERSATION, MemoryConversationStore, type ConversationState, type ConversationStore, type LoadedSkill, type TurnMessages } from "./conversation.js";
export * from "./limits.js";
export { ROW_KINDS, skillRow, type PullVia, type RowKind, type StoredRow, type TranscriptRow } from "./rows.js";
export { runTurn, type TurnEnd, type TurnRequest, type TurnSetup } from "./runner.js";
export type { TurnHost } from "./tools/index.js";
export { TurnWorker, type TurnModel, type TurnQueue, type TurnWorkerOptions } from "./worker.js";
export { turnModel } from "./model.js";
