// A small text/event-stream parser (the WHATWG rules that matter here): `event:` and `data:` fields,
// multi-line data joined with "\n", comment lines starting with ":", an event ends at a blank line.
export interface SseEvent {
  event: string;
  data: string;
}

export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  /** The last chunk ended in "\r": a "\n" starting the next one belongs to that line break. */
  private skipLf = false;

  /** Feeds a decoded chunk; returns the events it completed. */
  push(chunk: string): SseEvent[] {
    if (this.skipLf && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.buffer += chunk;
    this.skipLf = this.buffer.endsWith('\r');
    const out: SseEvent[] = [];
    const lines = this.buffer.split(/\r\n|\n|\r/);
    this.buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (this.data.length) out.push({ event: this.event || 'message', data: this.data.join('\n') });
        this.event = '';
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    return out;
  }
}
