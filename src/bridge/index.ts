/** The kernel bridge: the one record (and its variable names) a kernel reaches its runtime with. */
export {
  BRIDGE_ENV_NAMES,
  BRIDGE_FIELDS,
  EXTENSION_NAMES,
  EXTENSIONS_SEPARATOR,
  bridgeEnv,
  bridgeJson,
  type KernelBridge,
  type RpcAccess,
} from "./contract.js";
