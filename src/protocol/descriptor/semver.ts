// Plugin versions are semantic versions (MAJOR.MINOR.PATCH with optional -prerelease and +build), as
// ForgeSyte requires and its clients compare. HomeClaw manifests in the wild often write "1.0" or
// "v2": those short forms are read as "1.0.0" / "2.0.0" (with a warning saying so) so existing
// manifests keep loading; anything else ("abc", "1.0.0.0", "01.2.3") is refused.
import type { IssueList } from './issues.js';

// The grammar of semver.org 2.0.0: numeric identifiers without leading zeros, dot-separated
// alphanumeric pre-release and build identifiers.
const NUMERIC = '(0|[1-9]\\d*)';
const PRE_ID = '(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)';
const BUILD_ID = '[0-9A-Za-z-]+';
const SEMVER = new RegExp(`^${NUMERIC}\\.${NUMERIC}\\.${NUMERIC}(?:-${PRE_ID}(?:\\.${PRE_ID})*)?(?:\\+${BUILD_ID}(?:\\.${BUILD_ID})*)?$`);
const SHORT_FORM = new RegExp(`^v?${NUMERIC}(?:\\.${NUMERIC})?(?:\\.${NUMERIC})?$`);

export function isSemver(value: string): boolean {
  return SEMVER.test(value);
}

export type VersionReading = { ok: true; version: string; normalised: boolean } | { ok: false; reason: string };

export function readSemver(value: string): VersionReading {
  if (SEMVER.test(value)) return { ok: true, version: value, normalised: false };
  const short = SHORT_FORM.exec(value);
  if (short) {
    const [, major, minor, patch] = short;
    return { ok: true, version: `${major}.${minor ?? '0'}.${patch ?? '0'}`, normalised: true };
  }
  return { ok: false, reason: `must be a semantic version MAJOR.MINOR.PATCH such as "1.2.0", not ${JSON.stringify(value)}` };
}

/** The version to store, or undefined (with an error recorded) when it is not a semantic version. */
export function checkVersion(value: string, path: string, issues: IssueList): string | undefined {
  const reading = readSemver(value);
  if (!reading.ok) {
    issues.error(path, reading.reason);
    return undefined;
  }
  if (reading.normalised) issues.warn(path, `version ${JSON.stringify(value)} read as the semantic version "${reading.version}"`);
  return reading.version;
}
