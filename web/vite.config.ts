// Builds the dashboard (web/) into dist/web, served by the Core at /. `base: './'` makes every URL in the
// output relative, so the page works under any path prefix (Home Assistant ingress, a reverse proxy).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    // The page must run with a strict Content-Security-Policy (no inline script): no module-preload polyfill.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
