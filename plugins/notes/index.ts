// The built-in "notes" plugin. One SQLite file per plugin data dir (<data_dir>/notes.db); each call
// opens and closes it, so hot reloads and tests never leave a handle behind. A note belongs to the user
// it was saved for and is listed and found only for them; one saved in a call made for no user (the admin
// token, the CLI) is the household's and is listed for everyone.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { BuiltinContext, BuiltinReturn } from '../../src/adapters/builtin-module.js';
import type { JsonObject } from '../../src/protocol/types.js';

export const NOTES_DB_FILE = 'notes.db';
const MAX_NOTE_CHARS = 10_000;

interface NoteRow {
  id: number;
  title: string | null;
  text: string;
  user_id: string | null;
  created_at: number;
}

function withNotes<T>(ctx: BuiltinContext, work: (db: Database.Database) => T): T {
  const db = new Database(join(ctx.data_dir, NOTES_DB_FILE));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 2000');
    db.exec(`CREATE TABLE IF NOT EXISTS notes (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      title TEXT,
      text TEXT NOT NULL,
      user_id TEXT,
      created_at INTEGER NOT NULL
    )`);
    return work(db);
  } finally {
    db.close();
  }
}

function limitOf(params: JsonObject): number {
  const value = typeof params.limit === 'number' ? Math.floor(params.limit) : 10;
  return Math.min(100, Math.max(1, value));
}

function line(note: NoteRow): string {
  const when = new Date(note.created_at).toISOString().slice(0, 16).replace('T', ' ');
  return `#${note.id} [${when}] ${note.title ? `${note.title}: ` : ''}${note.text}`;
}

function asData(notes: NoteRow[]): JsonObject {
  return {
    notes: notes.map((n) => ({ id: n.id, title: n.title, text: n.text, created_at: new Date(n.created_at).toISOString() })),
  };
}

export async function save_note(params: JsonObject, ctx: BuiltinContext): Promise<BuiltinReturn> {
  const text = typeof params.text === 'string' ? params.text.trim() : '';
  if (!text) return { success: false, error: 'the note is empty: say what to write down', ask_user: true, missing_parameters: ['text'] };
  if (text.length > MAX_NOTE_CHARS) return { success: false, error: `the note is too long (${text.length} characters, at most ${MAX_NOTE_CHARS})` };
  const title = typeof params.title === 'string' && params.title.trim() ? params.title.trim() : null;
  const id = withNotes(ctx, (db) =>
    Number(
      db.prepare('INSERT INTO notes (title, text, user_id, created_at) VALUES (?, ?, ?, ?)').run(title, text, ctx.request.user_id ?? null, Date.now())
        .lastInsertRowid,
    ),
  );
  ctx.log.info({ note_id: id }, 'note saved');
  return { text: `Saved note #${id}${title ? ` "${title}"` : ''}.`, data: { id, title, text } };
}

/** The notes a caller may see: their own and the household's. `IS` also matches a NULL user id. */
const VISIBLE = '(user_id IS ? OR user_id IS NULL)';

export async function list_notes(params: JsonObject, ctx: BuiltinContext): Promise<BuiltinReturn> {
  const owner = ctx.request.user_id ?? null;
  const notes = withNotes(
    ctx,
    (db) => db.prepare(`SELECT * FROM notes WHERE ${VISIBLE} ORDER BY created_at DESC, id DESC LIMIT ?`).all(owner, limitOf(params)) as NoteRow[],
  );
  if (notes.length === 0) return { text: 'You have no notes yet.', data: asData([]) };
  return { text: `Your ${notes.length === 1 ? 'note' : `${notes.length} latest notes`}:\n${notes.map(line).join('\n')}`, data: asData(notes) };
}

/** LIKE treats % and _ as wildcards: escape them so a search for "100%" means the text "100%". */
function likePattern(word: string): string {
  return `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function search_notes(params: JsonObject, ctx: BuiltinContext): Promise<BuiltinReturn> {
  const query = typeof params.query === 'string' ? params.query.trim() : '';
  const words = query.split(/\s+/).filter(Boolean).slice(0, 10);
  if (words.length === 0) return { success: false, error: 'say what to search for', ask_user: true, missing_parameters: ['query'] };
  const where = words.map(() => "(text LIKE ? ESCAPE '\\' OR COALESCE(title, '') LIKE ? ESCAPE '\\')").join(' AND ');
  const args = words.flatMap((w) => [likePattern(w), likePattern(w)]);
  const owner = ctx.request.user_id ?? null;
  const notes = withNotes(
    ctx,
    (db) =>
      db
        .prepare(`SELECT * FROM notes WHERE ${VISIBLE} AND ${where} ORDER BY created_at DESC, id DESC LIMIT ?`)
        .all(owner, ...args, limitOf(params)) as NoteRow[],
  );
  if (notes.length === 0) return { text: `No note mentions "${query}".`, data: asData([]) };
  return { text: `Notes about "${query}":\n${notes.map(line).join('\n')}`, data: asData(notes) };
}
