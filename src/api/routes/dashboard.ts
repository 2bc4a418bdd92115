// The web dashboard's files (built from web/ into dist/web by `npm run build`), served without a token:
// they hold no data, and the page asks for a token before it calls the API. GET / is the page, always
// revalidated (it names the current asset files); /assets/* are content-hashed, so browsers keep them
// for a year without asking again. Every URL in the page is relative, so it works under a path prefix
// (Home Assistant ingress, a reverse proxy).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Logger } from '../../log.js';
import { findPackageRoot } from '../../kit/package-root.js';

export interface DashboardRoutesDeps {
  /** The built dashboard (index.html + assets/); default <package root>/dist/web. */
  root?: string;
  log: Logger;
}

/** What the server must serve without a token. */
export const DASHBOARD_PUBLIC_PATHS = ['/'];
export const DASHBOARD_PUBLIC_PREFIXES = ['/assets/'];

/** The page may load only its own files and talk only to its own origin. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
  // Home Assistant shows the ingress panel in an iframe of its own origin, which is this page's origin too.
  "frame-ancestors 'self'",
].join('; ');

export function dashboardRoot(): string {
  return join(findPackageRoot(), 'dist', 'web');
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
}

export async function registerDashboardRoutes(app: FastifyInstance, deps: DashboardRoutesDeps): Promise<void> {
  const root = deps.root ?? dashboardRoot();
  if (!existsSync(join(root, 'index.html'))) {
    deps.log.warn({ root }, 'the web dashboard is not built (run `npm run build`); GET / explains that');
    app.get('/', async (_request, reply) =>
      securityHeaders(reply)
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send(`The HomeClaw dashboard is not built: run \`npm run build\` (it builds web/ into ${root}), then restart the Core.\n`),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root: join(root, 'assets'),
    prefix: '/assets/',
    // Hashed names change with their content, so a cached copy never goes stale.
    immutable: true,
    maxAge: '365d',
    index: false,
    list: false,
    dotfiles: 'deny',
    setHeaders: (reply) => {
      void reply.header('x-content-type-options', 'nosniff');
    },
  });
  app.get('/', async (_request, reply) =>
    securityHeaders(reply)
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('cache-control', 'no-cache')
      .sendFile('index.html', root, { cacheControl: false }),
  );
}
