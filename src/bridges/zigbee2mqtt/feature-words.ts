// Everyday words for the features Zigbee devices report, so a question in a person's words finds the
// device: nobody asks whether the "water_leak" property is true, they ask whether the hallway is wet.
// Keyed by the expose's name (without endpoint); {device} is the spoken name of the device.

interface FeatureWords {
  /** Extra retrieval keywords. */
  words: string[];
  /** Typical questions a user asks about this feature. */
  questions?: string[];
}

const FEATURE_WORDS: Record<string, FeatureWords> = {
  water_leak: { words: ['water', 'leak', 'wet', 'flood', 'flooding'], questions: ['is the {device} wet', 'is there a leak at the {device}'] },
  contact: { words: ['open', 'closed', 'door', 'window', 'contact'], questions: ['is the {device} open', 'is the {device} closed'] },
  occupancy: { words: ['motion', 'movement', 'presence', 'occupied', 'someone'], questions: ['is anyone at the {device}', 'has the {device} seen motion'] },
  presence: { words: ['presence', 'occupied', 'someone', 'home'], questions: ['is anyone at the {device}'] },
  temperature: {
    words: ['temperature', 'warm', 'cold', 'hot', 'degrees'],
    questions: ['what is the temperature at the {device}', 'how warm is it at the {device}'],
  },
  local_temperature: { words: ['temperature', 'warm', 'cold', 'degrees', 'room'], questions: ['how warm is it at the {device}'] },
  humidity: { words: ['humidity', 'humid', 'damp', 'moisture'], questions: ['how humid is it at the {device}'] },
  smoke: { words: ['smoke', 'fire', 'alarm'], questions: ['is there smoke at the {device}'] },
  gas: { words: ['gas', 'leak', 'alarm'], questions: ['is there a gas leak at the {device}'] },
  carbon_monoxide: { words: ['carbon monoxide', 'co', 'gas', 'alarm'], questions: ['is there carbon monoxide at the {device}'] },
  illuminance: { words: ['light level', 'bright', 'dark', 'lux'], questions: ['how bright is it at the {device}'] },
  illuminance_lux: { words: ['light level', 'bright', 'dark', 'lux'], questions: ['how bright is it at the {device}'] },
  co2: { words: ['co2', 'carbon dioxide', 'air quality', 'stuffy'], questions: ['how is the air at the {device}'] },
  voc: { words: ['air quality', 'voc', 'pollution'], questions: ['how is the air at the {device}'] },
  pm25: { words: ['air quality', 'particulate', 'dust', 'pollution'], questions: ['how is the air at the {device}'] },
  pressure: { words: ['pressure', 'air pressure', 'barometer'] },
  vibration: { words: ['vibration', 'shaking', 'knock', 'movement'], questions: ['is the {device} vibrating'] },
  tamper: { words: ['tamper', 'tampered'] },
  soil_moisture: { words: ['soil', 'moisture', 'plant', 'watering'], questions: ['does the {device} need water'] },
  battery: { words: ['battery'] },
  battery_low: { words: ['battery', 'low battery'] },
  power: { words: ['power', 'watts', 'consumption', 'usage'], questions: ['how much power is the {device} using'] },
  energy: { words: ['energy', 'consumption', 'kwh', 'usage'] },
  brightness: { words: ['brightness', 'dim', 'bright'] },
  color_temp: { words: ['colour temperature', 'warm white', 'cool white'] },
  color_xy: { words: ['colour', 'color'] },
  color_hs: { words: ['colour', 'color', 'hue'] },
  position: { words: ['position', 'open', 'close', 'percent'] },
  occupied_heating_setpoint: { words: ['heating', 'thermostat', 'setpoint', 'target temperature'], questions: ['what temperature is the {device} set to'] },
  current_heating_setpoint: { words: ['heating', 'thermostat', 'setpoint', 'target temperature'], questions: ['what temperature is the {device} set to'] },
  system_mode: { words: ['mode', 'heating', 'cooling'] },
  lock_state: { words: ['lock', 'locked', 'unlocked'], questions: ['is the {device} locked'] },
  child_lock: { words: ['child lock'] },
};

/** Words for the kind of device a specific expose stands for. */
const GROUP_WORDS: Record<string, string[]> = {
  light: ['light', 'lamp', 'on', 'off'],
  switch: ['switch', 'plug', 'socket', 'power', 'on', 'off'],
  cover: ['blind', 'curtain', 'shade', 'shutter', 'open', 'close'],
  lock: ['lock', 'unlock', 'door lock'],
  climate: ['thermostat', 'heating', 'radiator', 'temperature'],
  fan: ['fan', 'ventilation', 'on', 'off'],
};

export function groupWords(group: string): string[] {
  return GROUP_WORDS[group] ?? [];
}

/** The spoken form of a friendly name: "hallway/leak_sensor" → "hallway leak sensor". */
export function spokenName(friendlyName: string): string {
  return friendlyName
    .replace(/[/_\-.]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function wordsFor(featureName: string): string[] {
  return FEATURE_WORDS[featureName]?.words ?? [];
}

export function questionsFor(featureName: string, device: string): string[] {
  return (FEATURE_WORDS[featureName]?.questions ?? []).map((q) => q.replace('{device}', device));
}

/** Commands a user gives a device of a specific type (light, switch, cover...). */
export function commandsFor(group: string, device: string, settable: ReadonlySet<string>): string[] {
  switch (group) {
    case 'light':
      return [`turn on the ${device}`, `turn off the ${device}`, ...(settable.has('brightness') ? [`dim the ${device} to 30 percent`] : [])];
    case 'switch':
      return [`turn on the ${device}`, `switch off the ${device}`];
    case 'cover':
      return [`open the ${device}`, `close the ${device}`, ...(settable.has('position') ? [`set the ${device} to 50 percent`] : [])];
    case 'lock':
      return [`lock the ${device}`, `unlock the ${device}`];
    case 'climate':
      return [`set the ${device} to 21 degrees`];
    case 'fan':
      return [`turn on the ${device}`, `set the ${device} to high`];
    default:
      return [];
  }
}
