// tsc writes dist/src/cli.js without the execute bit, and `npx homeclaw` (the package's own bin, which npm
// runs directly through its #! line) then fails with "Permission denied" on a fresh build. Every build
// marks it executable.
import { chmodSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src', 'cli.js');
if (existsSync(cli)) chmodSync(cli, 0o755);
