// Who speaks in a Wyoming conversation, and in which session. Home Assistant sends no user identity:
// its `transcript` context carries `conversation_id` and, from a voice satellite, `satellite_id` (the
// satellite's entity id) and `device_id` (its device registry id). The user therefore comes from
// configuration: the satellite or device mapped in `wyoming.users`, else `wyoming.user_id`. Values in
// the context choose among configured users only; they never name a user themselves.
//
// The conversation id becomes the session id, so the next turn of the same Home Assistant conversation
// (a satellite keeps its conversation id between wake words for a few minutes) continues a pending call.

export interface SpeakerSettings {
  user_id: string;
  users: Readonly<Record<string, string>>;
}

export interface Speaker {
  user_id: string;
  session_id: string;
  /** What chose the user, for the log: `satellite:<id>`, `device:<id>` or `default`. */
  matched_by: string;
  conversation_id?: string;
}

const MAX_ID_LENGTH = 256;

function idField(context: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = context?.[name];
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH ? value : undefined;
}

export function resolveSpeaker(context: Record<string, unknown> | undefined, settings: SpeakerSettings): Speaker {
  const satellite = idField(context, 'satellite_id');
  const device = idField(context, 'device_id');
  const conversation = idField(context, 'conversation_id');
  let user_id = settings.user_id;
  let matched_by = 'default';
  if (satellite !== undefined && Object.hasOwn(settings.users, satellite)) {
    user_id = settings.users[satellite] as string;
    matched_by = `satellite:${satellite}`;
  } else if (device !== undefined && Object.hasOwn(settings.users, device)) {
    user_id = settings.users[device] as string;
    matched_by = `device:${device}`;
  }
  // Without a conversation id, turns from one satellite (or device) still form one session.
  const session_id = conversation ?? (satellite ? `satellite:${satellite}` : device ? `device:${device}` : 'default');
  return { user_id, session_id, matched_by, ...(conversation !== undefined ? { conversation_id: conversation } : {}) };
}
