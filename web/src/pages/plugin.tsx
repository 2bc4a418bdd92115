// One plugin: what it is, its state (live), and each capability with a "try it" form built from the
// JSON Schema its parameters are validated against.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson } from '../api.js';
import { ErrorNote, StateBadge } from '../components/badges.js';
import { TryIt } from '../components/try-it.js';
import { clockTime } from '../format.js';
import type { LiveFeed } from '../live-feed.js';
import { href } from '../router.js';
import { serialLoader } from '../serial-loader.js';
import type { CapabilityInfo, PluginView } from '../types.js';

export function PluginPage(props: { id: string; feed: LiveFeed }) {
  const [plugin, setPlugin] = useState<PluginView | undefined>(undefined);
  const [capabilities, setCapabilities] = useState<CapabilityInfo[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  const [gone, setGone] = useState(false);

  useEffect(() => {
    setPlugin(undefined);
    setGone(false);
    const path = `api/plugins/${encodeURIComponent(props.id)}`;
    const load = serialLoader(async () => {
      try {
        const [view, caps] = await Promise.all([getJson<PluginView>(path), getJson<{ capabilities: CapabilityInfo[] }>(`${path}/capabilities`)]);
        setPlugin(view);
        setCapabilities(caps.capabilities);
        setGone(false);
        setError(undefined);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) setGone(true);
        else setError(`Could not load the plugin: ${(err as Error).message}`);
      }
    });
    load();
    const offReady = props.feed.onReady(load);
    const offEvent = props.feed.onEvent((kind, event) => {
      if (kind === 'registry' && event.plugin_id === props.id) load();
    });
    return () => {
      offReady();
      offEvent();
    };
  }, [props.id, props.feed]);

  if (gone)
    return (
      <section>
        <p class="crumbs">
          <a href={href('plugins')}>Plugins</a> /
        </p>
        <h1>No plugin “{props.id}”</h1>
        <p class="muted">It is not registered (or was just removed).</p>
      </section>
    );
  return (
    <section>
      <p class="crumbs">
        <a href={href('plugins')}>Plugins</a> / <span class="mono">{props.id}</span>
      </p>
      <ErrorNote error={error} />
      {plugin ? (
        <>
          <div class="page-head">
            <div>
              <h1>
                {plugin.name} <StateBadge state={plugin.state} reason={plugin.state_reason} />
              </h1>
              <p class="lead">{plugin.description}</p>
            </div>
          </div>
          <dl class="facts">
            <div>
              <dt>Id</dt>
              <dd class="mono">{plugin.id}</dd>
            </div>
            <div>
              <dt>Type</dt>
              <dd>{plugin.type}</dd>
            </div>
            <div>
              <dt>Source</dt>
              <dd>{plugin.source}</dd>
            </div>
            {plugin.version ? (
              <div>
                <dt>Version</dt>
                <dd>{plugin.version}</dd>
              </div>
            ) : null}
            <div>
              <dt>Updated</dt>
              <dd>{clockTime(Date.parse(plugin.updated_at))}</dd>
            </div>
            {plugin.state_reason ? (
              <div>
                <dt>Reason</dt>
                <dd>{plugin.state_reason}</dd>
              </div>
            ) : null}
          </dl>
          {plugin.examples?.length ? <p class="examples">Try saying: {plugin.examples.map((e) => `“${e}”`).join(' · ')}</p> : null}
          <h2>Capabilities</h2>
          {capabilities.map((capability) => (
            <article class="card capability" key={capability.id} id={`capability-${capability.id}`}>
              <header>
                <h3>
                  {capability.name} <span class="mono sub">{capability.id}</span>
                </h3>
                {capability.requires_confirmation ? <span class="badge warn">requires confirmation</span> : null}
              </header>
              <p>{capability.description}</p>
              {capability.output_description ? <p class="sub">Returns: {capability.output_description}</p> : null}
              <TryIt pluginId={plugin.id} pluginName={plugin.name} capability={capability} />
            </article>
          ))}
        </>
      ) : error ? null : (
        <p class="muted">Loading…</p>
      )}
    </section>
  );
}
