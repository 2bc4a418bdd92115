// The package root (package.json, topics/, plugins/). Compiled code runs from dist/src/, tests run from
// src/, and an installed package sits under node_modules/: walking up to the first package.json finds the
// root in all three cases without hard-coding a depth.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function findPackageRoot(fromUrl: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(fromUrl));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json found above ${fileURLToPath(fromUrl)}`);
    dir = parent;
  }
}

/** The directory holding asyncapi.yaml and schemas/. */
export function topicsDir(packageRoot: string = findPackageRoot()): string {
  return join(packageRoot, 'topics');
}
