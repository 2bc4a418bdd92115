// A document's id alone tells its plugin, kind and capability (queries fetch ids and distances only).
import { describe, expect, it } from 'vitest';
import { documentFromId, pluginDocuments } from '../../src/retrieval/plugin-documents.js';
import { HOME_PLUGINS } from './fixtures.js';

describe('documentFromId', () => {
  it('reads back plugin, kind and capability from every id pluginDocuments builds', () => {
    for (const descriptor of HOME_PLUGINS) {
      for (const doc of pluginDocuments(descriptor)) {
        const parsed = documentFromId(doc.id);
        expect(parsed, doc.id).toEqual({
          plugin_id: doc.plugin_id,
          kind: doc.kind,
          ...(doc.capability_id !== undefined ? { capability_id: doc.capability_id } : {}),
        });
      }
    }
  });

  it('refuses ids of another layout', () => {
    for (const id of ['', 'lights', '::name', 'lights::', 'lights::cap::', 'lights::other']) expect(documentFromId(id), id).toBeUndefined();
  });
});
