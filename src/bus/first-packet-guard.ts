// The MQTT parser holds a packet's bytes until the whole packet has arrived, and only then can anything
// check it. Before a client has logged in, its first packet (the CONNECT) may announce up to 256 MB: a
// client with no credential sending a few such headers and streaming slowly made the Core hold gigabytes
// until the connect timeout. The first packet's fixed header is read as the broker reads the bytes, and a
// connection whose first packet announces more than a CONNECT ever needs is closed at once.

/** A CONNECT holds a client id, a login and a will: 64 KiB is far beyond any real one. */
export const MAX_FIRST_PACKET_BYTES = 64 * 1024;

interface GuardedStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
  destroy(): unknown;
}

/**
 * Watches the stream's bytes until the first packet's remaining length is known; calls `refused` (with
 * the length read so far: at least that many bytes were announced) and destroys the stream when it is
 * over `limit`. Call after the broker has attached to the stream: the
 * listener then sees each chunk as the broker reads it and changes nothing about how it is read.
 */
export function guardFirstPacket(stream: GuardedStream, refused: (announcedBytes: number) => void, limit = MAX_FIRST_PACKET_BYTES): void {
  let seenTypeByte = false;
  let length = 0;
  let multiplier = 1;
  let lengthBytes = 0;
  const done = (): void => {
    stream.off('data', inspect);
  };
  const inspect = (chunk: Buffer): void => {
    for (let index = 0; index < chunk.length; index++) {
      if (!seenTypeByte) {
        seenTypeByte = true;
        continue;
      }
      const byte = chunk[index]!;
      length += (byte & 0x7f) * multiplier;
      multiplier *= 128;
      lengthBytes++;
      if (length > limit) {
        done();
        refused(length);
        stream.destroy();
        return;
      }
      // The last byte of the length, or a malformed fifth one (the parser refuses that itself).
      if ((byte & 0x80) === 0 || lengthBytes === 4) return done();
    }
  };
  stream.on('data', inspect);
}
