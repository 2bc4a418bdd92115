// A URL may carry a password (mqtt://user:secret@host). Wherever one is shown — a log line, an error
// message, /api/status, `homeclaw doctor` — it goes through redactUrl first.

/**
 * The URL with its password replaced by "***"; a URL without one is shown exactly as written. The user
 * name stays: it names the account in use and is no secret. A string that does not parse as a URL is not
 * shown at all, since where a password would sit in it cannot be known.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable url)';
  }
}

/**
 * The URL as an error may show it to a user: the password and every query value replaced by "***", the
 * query's names kept (they say what was sent, and an API key is usually one of the values). Services such
 * as OpenWeatherMap take their key in the query, and a plugin's error reaches whoever made the call.
 */
export function redactUrlSecrets(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password && !parsed.search) return url;
    if (parsed.password) parsed.password = '***';
    if (parsed.search) parsed.search = [...parsed.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=***`).join('&');
    return parsed.toString();
  } catch {
    return '(unparsable url)';
  }
}
