/** General plumbing every domain may use and that knows nothing of albedo: paths, processes, file locks, atomic writes, bounded reads, events, the logger shape. */
export { PRIVATE_FILE_MODE, writeFileAtomic, removeOrphanTemps } from "./atomicWrite.js";
export { wallClockMs } from "./clock.js";
export { Emitter, type Disposable } from "./emitter.js";
export { findExecutable } from "./executable.js";
export type { Log, LogLevel } from "./log.js";
export { ALBEDO_DIR_NAME, installDir, installVersion, homeDir, MAX_UNIX_SOCKET_PATH_BYTES, STATE_DIR_ENV, stateDir, within } from "./paths.js";
export { currentProcess, isProcessAlive, isSameProcessAlive, processIdentity, processIdentityOf, processStartTime, type ProcessIdentity } from "./process.js";
export { isSqliteBusy, tryLockFile, type FileLock } from "./fileLock.js";
export { clearPidLock } from "./lockFile.js";
export { fileKind, readFileBounded } from "./boundedRead.js";
export { closeQuietly, FILE_WRITE_SETTLE_MS, FileMovedError, openRegularFile, readAt, readSteady, type OpenedFile } from "./regularFile.js";
export { isHeldOpen, type FileIdentity } from "./openHolders.js";
export { ownLimit, type ResourceLimit, type ResourceName } from "./rlimits.js";
export { zeromq, type Zeromq } from "./zeromq.js";
