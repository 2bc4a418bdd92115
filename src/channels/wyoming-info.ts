// The `info` answer to `describe`: HomeClaw as one intent-handling ("handle") program with one model.
// Field names follow the wyoming package's info dataclasses (HandleProgram, HandleModel, Artifact,
// Attribution). Home Assistant's wyoming integration offers an installed handle program as a
// conversation agent, named after the program, for the languages of its installed models (an empty
// list means every language).

export interface InfoSettings {
  name: string;
  languages: readonly string[];
  supports_home_control: boolean;
  version: string;
}

// The protocol requires an attribution with a URL; HomeClaw Bus has no public page to point to.
const ATTRIBUTION = { name: 'HomeClaw Bus', url: '' };

export function buildInfoData(settings: InfoSettings): Record<string, unknown> {
  const model = {
    name: 'homeclaw',
    attribution: ATTRIBUTION,
    installed: true,
    description: 'The HomeClaw conversation engine: plugins found by retrieval, called with a parameter dialogue',
    version: settings.version,
    languages: [...settings.languages],
  };
  const program = {
    name: settings.name,
    attribution: ATTRIBUTION,
    installed: true,
    description: 'HomeClaw Bus conversation agent',
    version: settings.version,
    models: [model],
    // Answers come whole: the engine produces one reply per message.
    supports_handled_streaming: false,
    supports_home_control: settings.supports_home_control,
  };
  return { asr: [], tts: [], handle: [program], intent: [], wake: [], mic: [], snd: [] };
}
