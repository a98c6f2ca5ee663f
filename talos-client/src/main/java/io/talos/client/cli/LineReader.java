package io.talos.client.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Splits a byte stream into lines without decoding them: a line ends at '\n' (a '\r' before it
 * is dropped); a last line without '\n' counts. Not thread-safe.
 */
final class LineReader {
  private final InputStream in;
  private final int maxLineBytes;
  private final byte[] buffer = new byte[64 * 1024];
  private int position;
  private int limit;
  private long lineNumber;

  LineReader(InputStream in, int maxLineBytes) {
    this.in = in;
    this.maxLineBytes = maxLineBytes;
  }

  /**
   * @return the next line without its terminator, or null at end of input
   * @throws IllegalArgumentException if a line is longer than {@code maxLineBytes}
   */
  byte[] next() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    boolean any = false;
    while (true) {
      if (position == limit) {
        limit = in.read(buffer, 0, buffer.length);
        position = 0;
        if (limit <= 0) {
          limit = 0;
          if (!any) return null;
          return finish(line);
        }
      }
      any = true;
      int start = position;
      while (position < limit && buffer[position] != '\n') position++;
      line.write(buffer, start, position - start);
      if (line.size() > maxLineBytes + 1) tooLong();
      if (position < limit) {
        position++; // the '\n'
        return finish(line);
      }
    }
  }

  /** Whether {@link #next} can return without waiting for more input. */
  boolean ready() throws IOException {
    return position < limit || in.available() > 0;
  }

  private byte[] finish(ByteArrayOutputStream line) {
    byte[] bytes = line.toByteArray();
    if (bytes.length > 0 && bytes[bytes.length - 1] == '\r') {
      bytes = Arrays.copyOf(bytes, bytes.length - 1);
    }
    if (bytes.length > maxLineBytes) tooLong();
    lineNumber++;
    return bytes;
  }

  private void tooLong() {
    throw new IllegalArgumentException("line " + (lineNumber + 1) + " is longer than "
        + maxLineBytes + " bytes, the largest message allowed (maxMessageBytes)");
  }
}
