export {
  validateSettings,
  skillNameProblem,
  SkillName,
  SETTINGS_SCHEMAS,
  REPLACED_SECTIONS,
  MAX_KERNEL_FIELD_LENGTH,
  MAX_KERNEL_POOL,
  MAX_SESSIONS_LIMIT,
  MAX_SETTINGS_DEPTH,
  MAX_SETTINGS_SKILL_NAME_LENGTH,
  MAX_SETTINGS_SKILL_NAMES,
  type DaemonSettings,
  type KernelSettings,
  type LimitsSettings,
  type SandboxMode,
  type Settings,
  type SettingsProblem,
  type SettingsScope,
  type SettingsValidation,
  type SkillsSettings,
  type Switch,
} from "./schema.js";
export { SettingsFileError, type SettingsFileFault } from "./errors.js";
export { ABSENT_REVISION, MAX_SETTINGS_BYTES, readSettingsFile, settingsRevision, type SettingsSnapshot } from "./read.js";
export { SETTINGS_LOCK_FILE, SETTINGS_LOCK_RETRY_MS, SETTINGS_LOCK_TIMEOUT_MS, withSettingsLock } from "./lock.js";
export {
  globalSettingsTarget,
  projectSettingsTarget,
  readSettings,
  updateSettings,
  SETTINGS_FILE_NAME,
  type SettingsTarget,
  type UpdateOptions,
} from "./store.js";
export { DEFAULT_SKILL_SWITCH, effectiveEnablement, type DecidingScope, type Enablement, type ScopedSettings } from "./precedence.js";
export { patchSkills, type SkillsPatch } from "./patch.js";
export { GLOBAL_ONLY_KEYS, globalOnlyChanges, globalOnlyMessage, isGlobalOnly, settingAt } from "./globalOnly.js";
