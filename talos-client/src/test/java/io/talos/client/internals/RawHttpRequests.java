package io.talos.client.internals;

import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;

/** Reading requests on a raw socket, for tests whose server misbehaves on purpose. */
final class RawHttpRequests {
  private RawHttpRequests() {}

  /**
   * Reads a request's head (up to the blank line).
   *
   * @return its Content-Length, 0 without one, or -1 at the end of the stream
   */
  static int readHead(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    int c;
    while ((c = in.read()) >= 0) {
      head.append((char) c);
      if (head.length() >= 4 && head.lastIndexOf("\r\n\r\n") == head.length() - 4) {
        for (String line : head.toString().split("\r\n")) {
          if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
            return Integer.parseInt(line.substring("content-length:".length()).strip());
          }
        }
        return 0;
      }
    }
    return -1;
  }
}
