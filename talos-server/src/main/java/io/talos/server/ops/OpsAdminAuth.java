package io.talos.server.ops;

import io.talos.common.auth.GalaxySigner;
import io.talos.server.auth.Authenticator;
import io.talos.server.auth.Authenticator.AuthenticationException;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataException;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.server.Request;

/**
 * The admin check of the ops API's protected paths: the request carries the same Galaxy signature
 * as an API request ({@link GalaxySigner}: {@code Authorization}, {@code X-Xiaomi-Timestamp},
 * {@code X-Xiaomi-Content-MD5} of the empty body), verified by the API's {@link Authenticator},
 * and the credential must be an admin credential. Ops requests carry no body: the MD5 header must
 * be that of zero bytes. The signature covers method and path, so a signed GET cannot be replayed
 * as a POST or on another path; a signed read may be repeated while its timestamp is valid
 * (auth.clock.skew.max.ms), which a read allows.
 *
 * <p>Thread-safe.
 */
public final class OpsAdminAuth {
  private static final byte[] EMPTY = new byte[0];
  private final Authenticator authenticator;
  private final Clock clock;

  public OpsAdminAuth(Authenticator authenticator, Clock clock) {
    this.authenticator = authenticator;
    this.clock = clock;
  }

  /** Why a request is refused: the HTTP status (401, 403, 412, 503) and what to say. */
  public static final class Refused extends Exception {
    final int status;
    final boolean sendServerTime;

    Refused(int status, String message, boolean sendServerTime) {
      super(message);
      this.status = status;
      this.sendServerTime = sendServerTime;
    }
  }

  /** The admin credential that signed the request. */
  public Credential requireAdmin(Request request) throws Refused {
    Map<String, List<String>> headers = Authenticator.headersOf(request.getHeaders());
    Credential credential;
    try {
      Authenticator.Claim claim = authenticator.checkHeaders(headers);
      credential = authenticator.verifySignature(claim, request.getMethod(), request.getHttpURI().getPath(),
          request.getHttpURI().getQuery(), headers);
      authenticator.verifyBody(headers, credential, EMPTY, 0);
    } catch (AuthenticationException e) {
      String hint = e.httpStatus() == 401
          ? " (this path needs a request signed with the admin credential, like the API; see docs/operations.md)" : "";
      throw new Refused(e.httpStatus(), e.getMessage() + hint, e.httpStatus() == 412);
    } catch (MetadataException e) {
      throw new Refused(503, "the metadata store is unavailable, retry later: " + e.getMessage(), false);
    }
    if (!credential.admin()) {
      throw new Refused(403, "secretKeyId '" + credential.secretKeyId()
          + "' is not an admin credential; this path needs the admin credential", false);
    }
    return credential;
  }

  /** The server's clock in epoch seconds, sent with 412 so that a client can correct its clock. */
  long serverSeconds() {
    return clock.millis() / 1000;
  }
}
