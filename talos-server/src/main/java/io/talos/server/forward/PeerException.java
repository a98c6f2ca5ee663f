package io.talos.server.forward;

/**
 * A forwarded request got no answer from its owner. Every reason is retriable for the client;
 * they differ in whether the request may have run.
 */
public final class PeerException extends Exception {
  public enum Reason {
    /** The owner could not be reached: the request was never sent, nothing was done. */
    UNAVAILABLE,
    /** Too many requests wait for this owner already: refused at once, nothing was done. */
    OVERLOADED,
    /** Sent, but no answer in time or the connection broke: it may or may not have been served. */
    NO_ANSWER
  }

  private final Reason reason;

  public PeerException(Reason reason, String message) {
    super(message, null, false, false);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
