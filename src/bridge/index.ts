/** The kernel bridge: the one record (and its variable names) a kernel reaches its runtime with. */
export {
  BRIDGE_ENV_NAMES,
  BRIDGE_FIELDS,
  CHECKPOINT_DIR_ENV,
  CHECKPOINT_RESTORE_ENV,
  EXTENSION_NAMES,
  EXTENSIONS_SEPARATOR,
  LAUNCHER_INSTALL_ENV,
  LAUNCHER_NODE_ENV,
  MAX_WORKSPACE_WALK,
  WORKSPACE_ENV,
  WORKSPACE_MARKERS,
  bridgeEnv,
  bridgeJson,
  type KernelBridge,
  type RpcAccess,
} from "./contract.js";
