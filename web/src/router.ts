// Hash routes (#/plugins/time): the document URL never changes, so every relative URL in the page keeps
// resolving against the page's own folder, whatever prefix a proxy puts in front of it.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'plugins' }
  | { page: 'plugin'; id: string }
  | { page: 'invocations' }
  | { page: 'search' }
  | { page: 'chat' }
  | { page: 'profile' }
  | { page: 'home' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  switch (parts[0]) {
    case 'plugins':
      return parts[1] ? { page: 'plugin', id: parts[1] } : { page: 'plugins' };
    case 'invocations':
    case 'search':
    case 'chat':
    case 'profile':
      return { page: parts[0] };
    default:
      return { page: 'home' };
  }
}

export function href(route: string): string {
  return `#/${route}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = (): void => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
