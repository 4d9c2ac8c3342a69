export { OperationsStore, type OperationLookup, type OperationsStoreOptions, type RecoveryReport } from "./store.js";
export type { Admission, AdmitResult, Receipt } from "./admission.js";
export { DATABASE_FILE_MODE, DatabaseFileError, type DatabaseFileFault } from "./dbFile.js";
export type { AdmissionErrorCode, AdmissionRefusal } from "./errors.js";
export { activationBlock, type AdmitInput, type CommandInput, type MessageInput, type ReplayCandidate, type TurnTexts } from "./input.js";
export type { DeliveryStatus, Turn, TurnOutcome, TurnResult, TurnState } from "./turns.js";
export type { TranscriptEntry, TranscriptTable } from "./transcript.js";
export { newOperationId, parseUuidV7 } from "./uuidv7.js";
export { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
export {
  MAX_INPUT_NAME_LENGTH,
  MAX_INPUT_TEXT_BYTES,
  MAX_QUEUED_INPUTS,
  OPERATION_FUTURE_SKEW_MS,
  OPERATIONS_BUSY_TIMEOUT_MS,
  RECEIPT_TTL_MS,
} from "./limits.js";
