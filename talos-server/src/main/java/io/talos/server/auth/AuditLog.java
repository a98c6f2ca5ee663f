package io.talos.server.auth;

import io.talos.server.metadata.Credential;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit trail: one line per security-relevant event on the dedicated logger {@value
 * #LOGGER_NAME}, which the server's log4j configuration routes to its own file ({@code
 * audit.log}) and nowhere else.
 *
 * <p>Events: administrative and permission-changing calls (credentials, topics, partition reset,
 * ACLs, quotas) with their outcome, whoever made them and from where; and authentication
 * failures (401, and 409 for a replayed request) with the key id the request claimed and the
 * remote address. A line never holds a secret key or a signature: callers pass what to log, and
 * the credential answers that carry a secret are logged by their non-secret part only.
 *
 * <p>Line format, key=value pairs, values with spaces or quotes quoted and escaped, control
 * characters escaped, every value cut to {@value #MAX_VALUE_CHARS} characters (a key id is the
 * client's text until verified):
 * <pre>
 * action=createCredential outcome=ok keyId=TK0123 account=admin remote=10.0.0.7:51234 detail="..."
 * authFailure status=401 keyId=TK0123 remote=10.0.0.7:51234 suppressed=0 reason="..."
 * </pre>
 *
 * <p>Authentication failures are rate-limited per claimed key id: at most one line per {@code
 * intervalMs} (audit.auth.failure.interval.ms), carrying in {@code suppressed} how many failures
 * of that key id were not logged since its previous line. At most {@code maxKeys}
 * (audit.auth.failure.keys.max) key ids are tracked at once; beyond that, entries whose interval
 * ended are dropped (their pending count logged), and a flood of distinct key ids shares the one
 * entry {@code keyId=*}, so neither memory nor the log grows with what a client invents.
 *
 * <p>Thread-safe.
 */
public final class AuditLog {
  /** The logger name the log4j configuration routes to the audit file. */
  public static final String LOGGER_NAME = "talos.audit";
  static final int MAX_VALUE_CHARS = 512;
  /** The shared entry of key ids beyond maxKeys. */
  static final String OVERFLOW_KEY = "*";

  private final Logger log;
  private final Clock clock;
  private final long intervalMs;
  private final int maxKeys;
  /** Claimed key id → its current rate-limit window. Guarded by this. */
  private final Map<String, Window> failures = new HashMap<>();

  private static final class Window {
    long loggedMs;
    long suppressed;
  }

  public AuditLog(Clock clock, long intervalMs, int maxKeys) {
    this(LoggerFactory.getLogger(LOGGER_NAME), clock, intervalMs, maxKeys);
  }

  AuditLog(Logger log, Clock clock, long intervalMs, int maxKeys) {
    if (intervalMs < 0 || maxKeys < 1) {
      throw new IllegalArgumentException("intervalMs must be >= 0 and maxKeys >= 1, were " + intervalMs + ", " + maxKeys);
    }
    this.log = log;
    this.clock = clock;
    this.intervalMs = intervalMs;
    this.maxKeys = maxKeys;
  }

  /**
   * An administrative or permission-changing call and its outcome.
   *
   * @param outcome "ok" or the error code's name
   * @param caller the credential that signed the call
   * @param detail what was acted on (arguments, the non-secret part of the answer); never a secret
   */
  public void action(String action, String outcome, Credential caller, String remote, String detail) {
    log.info("action={} outcome={} keyId={} account={} remote={} detail={}", value(action), value(outcome),
        value(caller.secretKeyId()), value(caller.ownerId()), value(remote), value(detail));
  }

  /**
   * A request refused by authentication.
   *
   * @param keyId the key id the request claimed (unverified), or null if it named none
   * @param reason the refusal's message (it quotes at most the key id, never a secret)
   */
  public void authFailure(int status, String keyId, String remote, String reason) {
    String key = keyId == null ? "-" : keyId.length() > MAX_VALUE_CHARS ? keyId.substring(0, MAX_VALUE_CHARS) : keyId;
    long now = clock.millis();
    long suppressed;
    List<String[]> flushed = new ArrayList<>();
    synchronized (this) {
      Window w = failures.get(key);
      if (w == null) {
        if (failures.size() >= maxKeys) {
          dropEnded(now, flushed);
          if (failures.size() >= maxKeys) key = OVERFLOW_KEY;
        }
        w = failures.get(key);
      }
      if (w == null) {
        w = new Window();
        failures.put(key, w);
      } else if (now - w.loggedMs < intervalMs) {
        w.suppressed++;
        key = null;
      }
      suppressed = w.suppressed;
      if (key != null) {
        w.loggedMs = now;
        w.suppressed = 0;
      }
    }
    for (String[] f : flushed) {
      log.info("authFailure status=- keyId={} remote=- suppressed={} reason=\"interval ended\"", value(f[0]), f[1]);
    }
    if (key != null) {
      log.info("authFailure status={} keyId={} remote={} suppressed={} reason={}", status, value(key), value(remote),
          suppressed, value(reason));
    }
  }

  /** How many key ids are tracked (tests). */
  synchronized int trackedKeys() {
    return failures.size();
  }

  /** Drops windows that ended, collecting the ones with unlogged failures. Holding this. */
  private void dropEnded(long now, List<String[]> flushed) {
    for (Iterator<Map.Entry<String, Window>> it = failures.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Window> e = it.next();
      if (now - e.getValue().loggedMs >= intervalMs) {
        if (e.getValue().suppressed > 0) flushed.add(new String[] {e.getKey(), Long.toString(e.getValue().suppressed)});
        it.remove();
      }
    }
  }

  /** A value as written: cut, control characters and quotes escaped, quoted if it has spaces. */
  static String value(String v) {
    if (v == null) return "-";
    String s = v.length() > MAX_VALUE_CHARS ? v.substring(0, MAX_VALUE_CHARS) + "..." : v;
    StringBuilder b = new StringBuilder(s.length() + 2);
    boolean quote = s.isEmpty();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
        quote = true;
      } else if (c < 0x20 || c == 0x7f) {
        b.append(String.format("\\u%04x", (int) c));
        quote = true;
      } else {
        if (c == ' ' || c == '=') quote = true;
        b.append(c);
      }
    }
    return quote ? "\"" + b + "\"" : b.toString();
  }
}
