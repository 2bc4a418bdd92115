// Debian's Chromium driven by playwright-core, for the dashboard's browser tests and `npm run
// screenshots`. Playwright never downloads a browser here: it starts /usr/bin/chromium (apt package
// chromium) headless, with a fresh profile of its own, and with Chromium's background traffic (updates,
// sync, QUIC probes) off, since the machine has no network beyond loopback.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env['HOMECLAW_CHROMIUM'] ?? '/usr/bin/chromium';

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM_PATH)
    ? undefined
    : `${CHROMIUM_PATH} not found: install Debian's chromium (apt-get install -y chromium), or set HOMECLAW_CHROMIUM`;
}

/** A headless Chromium; each browser.newContext() is a fresh profile (storage, cookies). */
export async function launchChromium(): Promise<Browser> {
  const missing = chromiumMissing();
  if (missing) throw new Error(missing);
  // Playwright gives the browser an empty temporary --user-data-dir of its own and removes it on close.
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}
