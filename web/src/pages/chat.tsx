// Talking to the assistant through POST /api/messages on the channel "dashboard". A user token speaks as
// its user (the Core fills user_id in); the admin picks whom to speak as. Questions from the parameter
// dialogue ("I have your address as … Is that correct?") get Yes / Cancel buttons, and the answer goes to
// the same session, so "yes" confirms exactly what was asked. The conversation lasts as long as the tab.
import { useEffect, useRef, useState } from 'preact/hooks';
import { sendJson } from '../api.js';
import type { ChannelReply, Whoami } from '../types.js';

interface Line {
  id: number;
  from: 'you' | 'homeclaw';
  text: string;
  kind?: ChannelReply['kind'];
  via?: string;
  as?: string;
}

const CHANNEL = 'dashboard';
const SPEAKER_KEY = 'homeclaw.chat.speaker';
let nextId = 1;
// Kept for the life of the tab, so leaving the page and coming back keeps the conversation.
const transcript: Line[] = [];
// getRandomValues works on plain-HTTP pages too (randomUUID needs a secure context).
const sessionId = `dashboard-${Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('')}`;

function defaultSpeaker(who: Whoami): string {
  const saved = sessionStorage.getItem(SPEAKER_KEY);
  if (saved) return saved;
  if (who.kind === 'admin' && who.via === 'ingress' && who.ingress_user) return who.ingress_user;
  return 'household';
}

export function ChatPage(props: { who: Whoami }) {
  const [lines, setLines] = useState<Line[]>([...transcript]);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [speaker, setSpeaker] = useState(() => (props.who.kind === 'user' ? props.who.user_id : defaultSpeaker(props.who)));
  const log = useRef<HTMLOListElement>(null);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    log.current?.lastElementChild?.scrollIntoView({ block: 'end' });
  }, [lines]);

  const add = (line: Omit<Line, 'id'>): void => {
    transcript.push({ ...line, id: nextId++ });
    setLines([...transcript]);
  };

  const say = async (message: string): Promise<void> => {
    const trimmed = message.trim();
    if (!trimmed || busy) return;
    const as = speaker.trim();
    if (props.who.kind === 'admin' && !as) return;
    setBusy(true);
    setText('');
    add({ from: 'you', text: trimmed, as });
    try {
      const body = { channel: CHANNEL, session_id: sessionId, text: trimmed, ...(props.who.kind === 'admin' ? { user_id: as } : {}) };
      const reply = await sendJson<ChannelReply>('POST', 'api/messages', body);
      add({
        from: 'homeclaw',
        text: reply.text,
        kind: reply.kind,
        ...(reply.plugin_id ? { via: `${reply.plugin_id}${reply.capability_id ? `.${reply.capability_id}` : ''}` } : {}),
      });
    } catch (err) {
      add({ from: 'homeclaw', text: `Not sent: ${(err as Error).message}`, kind: 'error' });
    }
    setBusy(false);
    input.current?.focus();
  };

  const last = lines[lines.length - 1];
  const asking = last?.from === 'homeclaw' && last.kind === 'question';
  return (
    <section class="chat">
      <div class="page-head">
        <div>
          <h1>Chat</h1>
          <p class="muted">
            {props.who.kind === 'user' ? (
              <>
                You speak as <strong>{props.who.user_id}</strong>; the assistant fills in what it needs from your profile and asks before it uses it.
              </>
            ) : (
              'As the admin you may speak as any user: their profile and policy apply.'
            )}
          </p>
        </div>
        {props.who.kind === 'admin' ? (
          <label class="speaker">
            Speak as
            <input
              value={speaker}
              aria-label="Speak as user"
              onChange={(e) => {
                const value = (e.target as HTMLInputElement).value;
                setSpeaker(value);
                sessionStorage.setItem(SPEAKER_KEY, value);
              }}
            />
          </label>
        ) : null}
      </div>
      <div class="card chat-card">
        <ol class="messages" ref={log} aria-live="polite" aria-label="Conversation">
          {lines.length === 0 ? <li class="empty">Say what you need, e.g. “what time is it?” or “buy me some milk”.</li> : null}
          {lines.map((line) => (
            <li key={line.id} class={`message ${line.from} ${line.kind ?? ''}`} data-kind={line.kind ?? 'said'}>
              <div class="bubble">{line.text}</div>
              {line.via ? <div class="meta mono">{line.via}</div> : null}
              {line.from === 'you' && props.who.kind === 'admin' && line.as ? <div class="meta">as {line.as}</div> : null}
            </li>
          ))}
        </ol>
        {asking ? (
          <div class="quick-replies">
            <button type="button" class="primary" onClick={() => void say('yes')} disabled={busy}>
              Yes
            </button>
            <button type="button" onClick={() => void say('cancel')} disabled={busy}>
              Cancel
            </button>
          </div>
        ) : null}
        <form
          class="composer"
          onSubmit={(e) => {
            e.preventDefault();
            void say(text);
          }}
        >
          <input
            ref={input}
            value={text}
            placeholder={asking ? 'Answer, e.g. yes, or address=12 Oak St' : 'Message'}
            aria-label="Message"
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
            autofocus
          />
          <button type="submit" class="primary" disabled={busy || !text.trim()}>
            {busy ? '…' : 'Send'}
          </button>
        </form>
      </div>
    </section>
  );
}
