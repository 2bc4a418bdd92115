// The dashboard: sign-in, then the pages the credential may use. An admin sees everything and a live
// event feed; a user token can chat, search and edit its own profile (the Core refuses the rest anyway).
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { whenUnauthorized } from './api.js';
import { openLiveFeed, type FeedState, type LiveFeed } from './live-feed.js';
import { ChatPage } from './pages/chat.js';
import { InvocationsPage } from './pages/invocations.js';
import { PluginPage } from './pages/plugin.js';
import { PluginsPage } from './pages/plugins.js';
import { ProfilePage } from './pages/profile.js';
import { SearchPage } from './pages/search.js';
import { SignInPage } from './pages/sign-in.js';
import { href, useRoute, type Route } from './router.js';
import { describe, restoreSession, signOut, type Session } from './session.js';
import './styles.css';

const ENDED = 'Your session ended: the Core no longer accepts this token.';

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);

  useEffect(() => {
    void restoreSession().then((restored) => {
      setNotice(restored.notice);
      setSession(restored.session ?? null);
    });
    whenUnauthorized(() => {
      signOut();
      setNotice(ENDED);
      setSession(null);
    });
  }, []);

  if (session === undefined) return <main class="splash">Loading…</main>;
  if (session === null)
    return (
      <SignInPage
        notice={notice}
        onSignedIn={(next) => {
          setNotice(undefined);
          setSession(next);
        }}
      />
    );
  return (
    <Shell
      session={session}
      onSignOut={() => {
        signOut();
        setSession(null);
      }}
    />
  );
}

interface NavItem {
  route: string;
  label: string;
  pages: Route['page'][];
}

const ADMIN_NAV: NavItem[] = [
  { route: 'plugins', label: 'Plugins', pages: ['plugins', 'plugin'] },
  { route: 'invocations', label: 'Invocations', pages: ['invocations'] },
  { route: 'search', label: 'Search', pages: ['search'] },
  { route: 'chat', label: 'Chat', pages: ['chat'] },
  { route: 'profile', label: 'Profiles', pages: ['profile'] },
];

const USER_NAV: NavItem[] = [
  { route: 'chat', label: 'Chat', pages: ['chat'] },
  { route: 'search', label: 'Search', pages: ['search'] },
  { route: 'profile', label: 'My profile', pages: ['profile'] },
];

const FEED_LABEL: Record<FeedState, string> = { connecting: 'Connecting…', live: 'Live', down: 'Reconnecting…' };

function Shell(props: { session: Session; onSignOut: () => void }) {
  const { who } = props.session;
  const admin = who.kind === 'admin';
  const route = useRoute();
  const feed = useMemo<LiveFeed | undefined>(() => (admin ? openLiveFeed({ onUnauthorized: props.onSignOut }) : undefined), [admin]);
  const [feedState, setFeedState] = useState<FeedState>(feed?.state() ?? 'connecting');
  useEffect(() => {
    if (!feed) return;
    const off = feed.onState(setFeedState);
    // The stream opened at render and effects run later (much later in a tab that does not paint): a
    // state it reached in between has no listener, so the badge starts from where the feed is now.
    setFeedState(feed.state());
    return () => {
      off();
      feed.stop();
    };
  }, [feed]);

  const nav = admin ? ADMIN_NAV : USER_NAV;
  const page =
    route.page === 'home' || !nav.some((item) => item.pages.includes(route.page)) ? (admin ? { page: 'plugins' as const } : { page: 'chat' as const }) : route;

  return (
    <div class="shell">
      <header class="topbar">
        <a class="brand" href={href(admin ? 'plugins' : 'chat')}>
          <span class="logo" aria-hidden="true" />
          HomeClaw
        </a>
        <nav aria-label="Pages">
          {nav.map((item) => (
            <a
              key={item.route}
              href={href(item.route)}
              class={item.pages.includes(page.page) ? 'active' : ''}
              aria-current={item.pages.includes(page.page) ? 'page' : undefined}
            >
              {item.label}
            </a>
          ))}
        </nav>
        <div class="who">
          {feed ? (
            <span class={`feed ${feedState}`} data-feed={feedState} title="Updates from the Core's event feed">
              {FEED_LABEL[feedState]}
            </span>
          ) : null}
          <span class="signed-in" data-principal={who.kind}>
            {who.kind === 'admin' ? 'Admin' : 'User'}
            {describe(who) ? (
              <>
                {' · '}
                <strong>{describe(who)}</strong>
              </>
            ) : null}
          </span>
          {props.session.token ? (
            <button type="button" class="link" onClick={props.onSignOut}>
              Sign out
            </button>
          ) : null}
        </div>
      </header>
      <main class="content">
        {page.page === 'plugins' && feed ? <PluginsPage feed={feed} /> : null}
        {page.page === 'plugin' && feed ? <PluginPage id={page.id} feed={feed} /> : null}
        {page.page === 'invocations' && feed ? <InvocationsPage feed={feed} /> : null}
        {page.page === 'search' ? <SearchPage /> : null}
        {page.page === 'chat' ? <ChatPage who={who} /> : null}
        {page.page === 'profile' ? <ProfilePage who={who} /> : null}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
