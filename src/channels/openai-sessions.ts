// Session continuity for OpenAI clients. They keep no session on the server: every turn resends the
// whole conversation. So after each answer the Core remembers a digest of the conversation up to and
// including that answer, and the session it belongs to. The next request of the same conversation
// carries exactly that history before its new user message, finds the session by the same digest, and
// so a "yes" continues the call waiting for confirmation. A conversation whose history was edited,
// regenerated or belongs to another user matches nothing and starts a new session: a "yes" there
// confirms nothing. Only user and assistant turns count (system prompts carry the time and change every
// turn), with whitespace normalised. The digest includes the user the request acts as.
import { createHash, randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { guardDiskFull } from '../kit/disk-full.js';
import { normaliseText, type Turn } from './openai-request.js';

const PRUNE_INTERVAL_MS = 60_000;

function digest(userId: string, turns: readonly Turn[]): string {
  return createHash('sha256')
    .update(JSON.stringify([userId, turns.map((turn) => [turn.role, turn.text])]), 'utf8')
    .digest('hex');
}

export class OpenAiSessions {
  private readonly lookup: Database.Statement<[string, number], { session_id: string }>;
  private readonly upsert: Database.Statement<[string, string, number]>;
  private lastPrune = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS openai_sessions (
      transcript_sha256 TEXT PRIMARY KEY,
      session_id TEXT NOT NULL,
      expires_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS openai_sessions_expiry ON openai_sessions (expires_at)`);
    this.lookup = db.prepare('SELECT session_id FROM openai_sessions WHERE transcript_sha256 = ? AND expires_at > ?');
    this.upsert = db.prepare(
      'INSERT INTO openai_sessions (transcript_sha256, session_id, expires_at) VALUES (?, ?, ?) ON CONFLICT (transcript_sha256) DO UPDATE SET session_id = excluded.session_id, expires_at = excluded.expires_at',
    );
  }

  /** The session this conversation continues, or a new one when its history is not one the Core answered. */
  sessionFor(userId: string, earlier: readonly Turn[]): { session_id: string; continued: boolean } {
    if (earlier.length > 0) {
      const row = this.lookup.get(digest(userId, earlier), this.now());
      if (row) return { session_id: row.session_id, continued: true };
    }
    return { session_id: `openai-${randomUUID()}`, continued: false };
  }

  /** Records that the conversation up to this answer belongs to the session. */
  remember(userId: string, earlier: readonly Turn[], userText: string, answer: string, sessionId: string): void {
    const turns: Turn[] = [...earlier, { role: 'user', text: normaliseText(userText) }, { role: 'assistant', text: normaliseText(answer) }];
    const now = this.now();
    guardDiskFull('remembering an OpenAI conversation', () => {
      this.upsert.run(digest(userId, turns), sessionId, now + this.ttlMs);
      if (now - this.lastPrune >= PRUNE_INTERVAL_MS) {
        this.lastPrune = now;
        this.db.prepare('DELETE FROM openai_sessions WHERE expires_at <= ?').run(now);
      }
    });
  }

  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM openai_sessions').get() as { n: number }).n;
  }
}
