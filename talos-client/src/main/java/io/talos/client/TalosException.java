package io.talos.client;

import io.talos.common.errors.ErrorCodes;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;

/**
 * A Talos operation failed. Every failure that comes from the server or from the way to it is
 * reported as this one unchecked exception, which says where it happened:
 *
 * <ul>
 *   <li>the server answered with a Talos error: {@link #errorCode()} is the wire code (for
 *       example {@link ErrorCode#TOPIC_NOT_EXIST}) and {@link #httpStatus()} is 0;
 *   <li>the server answered with an HTTP status other than 200 and no Thrift reply (bad
 *       signature 401, clock skew 412, request too large 413, ...): {@link #httpStatus()} is that
 *       status, {@link #errorCode()} is null, and the message is the server's response body;
 *   <li>there was no usable answer at all (connection refused, timeout, interrupted, a reply that
 *       is not valid Thrift): both are unset and {@link #getCause()} says why.
 * </ul>
 *
 * <p>{@link #isRetriable()} tells whether sending the same request again may succeed. It says
 * nothing about whether the failed request took effect: a put that timed out may have been
 * stored, and sending it again may store its messages twice.
 *
 * <p>Arguments that are wrong whatever the server's state (a message of 0 bytes, a negative
 * partition, a malformed topic name) are rejected before any request with
 * {@link IllegalArgumentException} instead.
 */
public class TalosException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final ErrorCode errorCode;
  private final int httpStatus;
  private final boolean retriable;

  /**
   * A failure carrying a wire error code; retriability follows {@link ErrorCodes#isRetriable}.
   *
   * @param errorCode the wire code, not null
   * @param message what happened, as the server or the client describes it
   */
  public TalosException(ErrorCode errorCode, String message) {
    this(errorCode, 0, ErrorCodes.isRetriable(errorCode), describe(errorCode, message), null);
  }

  /** For failures below the Thrift layer and for subclasses. */
  protected TalosException(ErrorCode errorCode, int httpStatus, boolean retriable, String message,
      Throwable cause) {
    super(message, cause);
    this.errorCode = errorCode;
    this.httpStatus = httpStatus;
    this.retriable = retriable;
  }

  /**
   * The server's Thrift error as an exception. A code number this client does not know (a newer
   * server's extension) becomes {@link ErrorCode#UNKNOWN}.
   */
  public static TalosException fromServer(GalaxyTalosException e) {
    ErrorCode code = e.getErrorCode() == null ? ErrorCode.UNKNOWN : e.getErrorCode();
    String message = e.getErrMsg() == null ? "(no message)" : e.getErrMsg();
    if (e.getDetails() != null && !e.getDetails().isEmpty()) {
      message = message + " (" + e.getDetails() + ")";
    }
    return new TalosException(code, 0, ErrorCodes.isRetriable(code), describe(code, message), e);
  }

  /**
   * The server answered with a non-200 HTTP status. 408, 412 (after the clock was adjusted),
   * 429 and the 5xx statuses are retriable; the others (400, 401, 403, 404, 405, 413, ...) are
   * not.
   *
   * @param body the response body, usually the server's explanation
   */
  public static TalosException httpStatus(int status, String body) {
    boolean retriable = status == 408 || status == 412 || status == 429 || status >= 500;
    String text = body == null || body.isBlank() ? "(empty response)" : body.strip();
    String name = statusName(status);
    return new TalosException(null, status, retriable,
        "HTTP " + status + (name.isEmpty() ? "" : " " + name) + ": " + text, null);
  }

  /**
   * No usable answer: the connection failed or timed out (retriable), or the call was
   * interrupted or the reply was unreadable (not retriable).
   */
  public static TalosException transport(String message, boolean retriable, Throwable cause) {
    return new TalosException(null, 0, retriable, message, cause);
  }

  /** The wire error code, or null when the failure did not come as a Talos error. */
  public ErrorCode errorCode() {
    return errorCode;
  }

  /** The HTTP status when the server answered with one other than 200, else 0. */
  public int httpStatus() {
    return httpStatus;
  }

  /** Whether the same request may succeed when sent again (see the class comment). */
  public boolean isRetriable() {
    return retriable;
  }

  private static String describe(ErrorCode code, String message) {
    return code.name() + "(" + code.getValue() + "): " + message;
  }

  private static String statusName(int status) {
    switch (status) {
      case 400: return "Bad Request";
      case 401: return "Unauthorized";
      case 403: return "Forbidden";
      case 404: return "Not Found";
      case 405: return "Method Not Allowed";
      case 408: return "Request Timeout";
      case 412: return "Precondition Failed (clock skew)";
      case 413: return "Payload Too Large";
      case 429: return "Too Many Requests";
      case 500: return "Internal Server Error";
      case 502: return "Bad Gateway";
      case 503: return "Service Unavailable";
      case 504: return "Gateway Timeout";
      default: return "";
    }
  }
}
