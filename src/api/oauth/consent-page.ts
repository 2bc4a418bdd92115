// The HTML of the consent page at /oauth/authorize and of the error page shown when a request cannot be
// sent back to its client (an unknown client, an unregistered redirect URI). Everything from the request
// is escaped; the page loads nothing (no scripts, no external styles) and refuses to be framed.
import type { FastifyReply } from 'fastify';

export interface ConsentView {
  client_name: string;
  client_id: string;
  /** Where the browser goes back to, shown so a person can spot a client pretending to be another. */
  redirect_uri: string;
  /** The authorization request's parameters, carried through the form unchanged. */
  hidden: Record<string, string>;
  /** Shown above the form after a failed attempt. */
  error?: string;
  act_as?: string;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:32rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:.75rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:1rem 0 .3rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #b8bfcc;border-radius:.4rem;font-size:1rem}
.hint{color:#5b6475;font-size:.9rem}.error{background:#fdecec;color:#8a1c1c;padding:.7rem;border-radius:.4rem}
.buttons{display:flex;gap:.75rem;margin-top:1.5rem}button{padding:.6rem 1.2rem;font-size:1rem;border-radius:.4rem;border:1px solid #b8bfcc;background:#fff;cursor:pointer}
button.allow{background:#1f6feb;color:#fff;border-color:#1f6feb}code{word-break:break-all}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>
`;
}

export function consentPage(view: ConsentView): string {
  const name = escapeHtml(view.client_name);
  const hidden = Object.entries(view.hidden)
    .map(([key, value]) => `<input type="hidden" name="${escapeHtml(key)}" value="${escapeHtml(value)}">`)
    .join('\n');
  return page(
    'Allow access to HomeClaw',
    `<h1>Allow “${name}” to use HomeClaw?</h1>
<p>The client <strong>${name}</strong> (<code>${escapeHtml(view.client_id)}</code>) asks to call HomeClaw's tools over MCP.
After your answer the browser goes back to <code>${escapeHtml(view.redirect_uri)}</code>.</p>
${view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : ''}
<form method="post" action="/oauth/authorize">
${hidden}
<label for="token">Your HomeClaw token</label>
<input id="token" type="password" name="token" autocomplete="off" required>
<p class="hint">A user token (<code>homeclaw users add &lt;id&gt;</code>): the client then acts as you, under your policy.
The admin token: the client acts as the admin, or as the user named below.</p>
<label for="act_as">Act as user (admin token only)</label>
<input id="act_as" name="act_as" value="${escapeHtml(view.act_as ?? '')}" placeholder="empty: the admin, with every tool" autocomplete="off">
<div class="buttons"><button class="allow" type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button></div>
</form>`,
  );
}

export function errorPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p class="error">${escapeHtml(message)}</p><p class="hint">Nothing was sent back to the client.</p>`);
}

/** Sends an HTML page with the headers every page of the authorization server carries. */
export function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
    .header('referrer-policy', 'no-referrer')
    .send(html);
}
