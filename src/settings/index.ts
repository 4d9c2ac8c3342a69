export {
  validateSettings,
  SkillName,
  SETTINGS_SCHEMAS,
  REPLACED_SECTIONS,
  MAX_KERNEL_POOL,
  MAX_SESSIONS_LIMIT,
  MAX_SETTINGS_DEPTH,
  MAX_SETTINGS_SKILL_NAME_LENGTH,
  MAX_SETTINGS_SKILL_NAMES,
  type Settings,
  type SettingsProblem,
  type SettingsScope,
  type Switch,
} from "./schema.js";
export { SettingsFileError } from "./errors.js";
export { ABSENT_REVISION, MAX_SETTINGS_BYTES, readSettingsFile, settingsRevision, type SettingsSnapshot } from "./read.js";
export { SETTINGS_LOCK_FILE } from "./lock.js";
export {
  globalSettingsTarget,
  projectSettingsTarget,
  readSettings,
  updateSettings,
  SETTINGS_FILE_NAME,
  type SettingsTarget,
} from "./store.js";
export { effectiveEnablement, type Enablement, type ScopedSettings } from "./precedence.js";
export { patchSkills, type SkillsPatch } from "./patch.js";
export { GLOBAL_ONLY_KEYS, globalOnlyChanges, globalOnlyMessage, isGlobalOnly, settingAt } from "./globalOnly.js";
