// The embedded defaults, read off the schema's `default:` keywords: what `npm start` runs with on a fresh
// machine, no file needed.
import { applyConfigDefaults } from './validate.js';
import type { CoreConfig } from './types.js';

export const DEFAULT_CONFIG: CoreConfig = applyConfigDefaults();
