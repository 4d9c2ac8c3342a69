/**
 * The presets shipped in the install (N-1): named lists of allow patterns a policy takes by
 * name. A table in code, so the build ships it and the settings check knows every name.
 */

export interface Preset {
  readonly name: string;
  /** One line: what the preset lets the kernel reach. */
  readonly summary: string;
  readonly patterns: readonly string[];
}

/** Every preset, in the order `albedo network presets` lists them. */
export const PRESETS: readonly Preset[] = [
  {
    name: "python-packages",
    summary: "the Python Package Index: pip install, pip download",
    patterns: ["pypi.org", "files.pythonhosted.org"],
  },
  {
    name: "github",
    summary: "GitHub: git over HTTPS, the API, release downloads and raw files",
    patterns: ["github.com", "api.github.com", "codeload.github.com", "uploads.github.com", "*.githubusercontent.com"],
  },
  {
    name: "huggingface",
    summary: "the Hugging Face Hub: models and data sets, with the stores their files are served from",
    patterns: ["huggingface.co", "*.huggingface.co", "hf.co", "*.hf.co"],
  },
  {
    name: "npm",
    summary: "the npm registry: npm install",
    patterns: ["registry.npmjs.org", "registry.yarnpkg.com"],
  },
];

/** The preset called `name`, or undefined. */
export function findPreset(name: string): Preset | undefined {
  return PRESETS.find((preset) => preset.name === name);
}
