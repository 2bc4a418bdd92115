// A parser for the text/event-stream format (the HTML standard's "server-sent events" interpretation
// rules): lines end with CRLF, LF or CR; a blank line dispatches the event gathered so far; lines
// starting with ":" are comments; "field: value" with one optional space after the colon. The browser's
// EventSource cannot send an Authorization header, so the dashboard reads the stream with fetch and
// parses it here. Pure: no DOM, so it is unit-tested under Node.

export interface SseMessage {
  /** The event type; "message" when the stream named none. */
  event: string;
  data: string;
}

export class SseParser {
  private buffer = '';
  private eventType = '';
  private dataLines: string[] = [];

  constructor(
    private readonly onMessage: (message: SseMessage) => void,
    private readonly onRetry: (ms: number) => void = () => {},
  ) {}

  /** Feeds decoded text; chunks may split lines (and CRLF pairs) anywhere. */
  push(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const end = this.buffer.search(/[\r\n]/);
      if (end < 0) return;
      // A CR at the very end may be the first half of a CRLF that the next chunk completes.
      if (this.buffer[end] === '\r' && end === this.buffer.length - 1) return;
      const line = this.buffer.slice(0, end);
      const skip = this.buffer[end] === '\r' && this.buffer[end + 1] === '\n' ? 2 : 1;
      this.buffer = this.buffer.slice(end + skip);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.eventType = value;
    else if (field === 'data') this.dataLines.push(value);
    else if (field === 'retry' && /^\d+$/.test(value)) this.onRetry(Number(value));
    // "id" and unknown fields are ignored: this stream has no replay to resume from.
  }

  private dispatch(): void {
    const hasData = this.dataLines.length > 0;
    const message = { event: this.eventType || 'message', data: this.dataLines.join('\n') };
    this.eventType = '';
    this.dataLines = [];
    if (hasData) this.onMessage(message);
  }
}
