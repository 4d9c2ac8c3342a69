export { OperationsStore, type OperationLookup } from "./store.js";
export type { AdmitResult, Receipt } from "./admission.js";
export { retryWhileBusy } from "./busy.js";
export { DatabaseFileError } from "./dbFile.js";

export type { AdmissionErrorCode } from "./errors.js";
export type { AdmitInput, CommandInput, ReplayCandidate } from "./input.js";
export type { Turn, TurnOutcome } from "./turns.js";
export type { TranscriptEntry } from "./transcript.js";
export { newOperationId, parseUuidV7 } from "./uuidv7.js";
export { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
export { MAX_INPUT_NAME_LENGTH, MAX_INPUT_TEXT_BYTES, MAX_QUEUED_INPUTS, OPERATION_FUTURE_SKEW_MS, RECEIPT_TTL_MS, STORE_BUSY_RETRY_MS, STORE_BUSY_WAIT_MS } from "./limits.js";
