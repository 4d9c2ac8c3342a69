export { assertKernelReady, label as describePython, managedVenvDir, probePython, pythonCandidate, PythonUnavailableError, resolvePython, venvPython, type PythonStatus } from "./interpreter.js";
export { MIN_IPYKERNEL_MAJOR } from "./requirements.js";
export { setupPython, type PhaseEvent, type SetupResult } from "./setup.js";
export { runDoctor, type CheckStatus, type DoctorCheck, type DoctorPackages, type DoctorReport, type KernelSpecSummary } from "./doctor.js";
export { MAX_EXTRA_PACKAGES } from "./limits.js";
export { packageProblem, packagesProblem, splitPackages, uniquePackages } from "./packages.js";
