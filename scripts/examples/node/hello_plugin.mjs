#!/usr/bin/env node
// A minimal HomeClaw plugin written with the Node SDK.
//   npm run build && node scripts/examples/node/hello_plugin.mjs --url mqtt://127.0.0.1:1883
// Outside this repository, import from 'homeclaw-bus/sdk' instead of the dist path.
import { parseArgs } from 'node:util';
import { connectPlugin } from '../../../dist/src/sdk/index.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.HOMECLAW_MQTT_URL ?? 'mqtt://127.0.0.1:1883' },
    id: { type: 'string', default: 'hello' },
    username: { type: 'string' },
    password: { type: 'string', default: process.env.HOMECLAW_PLUGIN_PASSWORD },
    'heartbeat-sec': { type: 'string', default: '30' },
  },
});

// Signal handlers first: a stop request during startup still ends the process cleanly.
let plugin;
const stop = () =>
  (plugin ? plugin.close() : Promise.resolve()).then(
    () => process.exit(0),
    () => process.exit(1),
  );
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

plugin = await connectPlugin({
  url: values.url,
  credentials: values.username ? { username: values.username, password: values.password ?? '' } : undefined,
  heartbeat_interval_sec: Number(values['heartbeat-sec']),
  descriptor: {
    id: values.id,
    name: 'Hello',
    description: 'Greets people by name.',
    examples: ['say hello to Ada', 'greet Bob'],
    capabilities: [
      {
        id: 'greet',
        name: 'Greet',
        description: 'Say hello to someone.',
        parameters: [
          { name: 'name', type: 'string', description: 'Who to greet' },
          { name: 'excited', type: 'boolean', required: false, default: false, description: 'Add an exclamation mark' },
        ],
      },
    ],
    config: { max_concurrency: 4 },
  },
  handlers: {
    greet: ({ name, excited }) => {
      const text = `Hello, ${name}${excited ? '!' : '.'}`;
      return { text, data: { greeting: text } };
    },
  },
});

console.log(JSON.stringify({ event: 'registered', plugin_id: plugin.pluginId, epoch: plugin.epoch }));
