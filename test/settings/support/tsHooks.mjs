import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** NodeNext sources import `./x.js`; map it to `./x.ts` when only the TypeScript file exists. */
export async function resolve(specifier, context, next) {
  if (/^\.{1,2}\//.test(specifier) && specifier.endsWith(".js") && context.parentURL?.startsWith("file:")) {
    const candidate = new URL(specifier.slice(0, -3) + ".ts", context.parentURL);
    if (!existsSync(new URL(specifier, context.parentURL)) && existsSync(candidate)) {
      return { url: candidate.href, shortCircuit: true };
    }
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
  const fileName = fileURLToPath(url);
  const output = ts.transpileModule(await readFile(fileName, "utf8"), {
    fileName,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false },
  });
  return { format: "module", source: output.outputText, shortCircuit: true };
}
