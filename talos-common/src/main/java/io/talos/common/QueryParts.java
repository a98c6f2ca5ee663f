package io.talos.common;

/**
 * Walks a raw query string ({@code id=7&type=putMessage&acl}) part by part, in place: a part's
 * name and value are compared and copied only when asked for. The server reads parameters of
 * every request's query (the method, the request id, the signed sub-resources), and splitting it
 * copied every part each time.
 *
 * <p>A part runs to the next {@code &}; its name to its first {@code =} (the whole part when it has
 * none), its value from there to the part's end. Empty parts ({@code a&&b}) are walked as parts
 * with an empty name. Not thread-safe: one per walk.
 */
public final class QueryParts {
  private final String query;
  private int next;
  private int nameStart;
  private int nameEnd;
  private int partEnd;

  /** @param query the raw query without {@code ?}, or null for none */
  public QueryParts(String query) {
    this.query = query == null ? "" : query;
  }

  /** Moves to the next part; false when there is none. */
  public boolean next() {
    if (next >= query.length()) return false;
    nameStart = next;
    partEnd = query.indexOf('&', nameStart);
    if (partEnd < 0) partEnd = query.length();
    int eq = query.indexOf('=', nameStart);
    nameEnd = eq < 0 || eq > partEnd ? partEnd : eq;
    next = partEnd + 1;
    return true;
  }

  /** Whether the current part's name is exactly {@code name}. */
  public boolean nameIs(String name) {
    return nameEnd - nameStart == name.length() && query.startsWith(name, nameStart);
  }

  /** Whether the current part has an {@code =}. */
  public boolean hasValue() {
    return nameEnd < partEnd;
  }

  /** The current part's value: after its first {@code =}, empty when it has none. */
  public String value() {
    return hasValue() ? query.substring(nameEnd + 1, partEnd) : "";
  }

  /** The value of the first part named {@code name} that has an {@code =}, or null. */
  public static String first(String query, String name) {
    for (QueryParts p = new QueryParts(query); p.next(); ) {
      if (p.hasValue() && p.nameIs(name)) return p.value();
    }
    return null;
  }
}
