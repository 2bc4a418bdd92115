// The `homeclaw` command as npm runs it (`npx homeclaw`, or after `npm link`): the compiled cli.js itself,
// executed through its #! line, so a build must leave it executable.
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureBuilt, REPO_ROOT } from '../e2e/helpers.js';

describe('the homeclaw bin', () => {
  it('is executable after a build and prints the package version when run directly', async () => {
    await ensureBuilt();
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { bin: { homeclaw: string }; version: string };
    const cli = join(REPO_ROOT, pkg.bin.homeclaw);
    expect(statSync(cli).mode & 0o111).not.toBe(0);
    const output = await new Promise<string>((resolve, reject) => {
      execFile(cli, ['--version'], { cwd: REPO_ROOT }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
    expect(output.trim()).toBe(pkg.version);
  });
});
