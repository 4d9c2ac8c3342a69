import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/** The web console's build: plain files the daemon serves from dist/web, hashed names under assets/. */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    // The CSP forbids inline script and style: everything goes in files.
    assetsInlineLimit: 0,
    modulePreload: false,
    sourcemap: false,
    target: "es2022",
  },
});
