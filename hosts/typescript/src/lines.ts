// Splits a stream of text into JSON lines on "\n" only: JSON strings may
// hold U+2028 and U+2029, which Node's readline would also split on.

/** Feeds complete lines (without "\n" or a trailing "\r") to a callback. */
export class LineSplitter {
  private buf = "";
  constructor(private readonly onLine: (line: string) => void) {}

  /** Adds a chunk; calls onLine for every line it completes. */
  push(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf("\n")) >= 0) {
      let line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line.length > 0) this.onLine(line);
    }
  }

  /** Flushes a last line that had no newline. */
  end(): void {
    const rest = this.buf;
    this.buf = "";
    if (rest.length > 0) this.onLine(rest.endsWith("\r") ? rest.slice(0, -1) : rest);
  }
}
