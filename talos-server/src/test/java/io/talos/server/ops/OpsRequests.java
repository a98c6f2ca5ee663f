package io.talos.server.ops;

import io.talos.common.auth.GalaxySigner;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Requests to a server's ops listener, signed like the Talos SDK signs (tests of any package). */
public final class OpsRequests {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private OpsRequests() {}

  /** {@code method path} on the ops listener at {@code opsEndpoint}, signed with the key if one is given. */
  public static HttpResponse<String> call(String opsEndpoint, String method, String path, String keyId, String secret)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(opsEndpoint + path))
        .method(method, HttpRequest.BodyPublishers.noBody());
    if (keyId != null) {
      String ts = Long.toString(System.currentTimeMillis() / 1000);
      String md5 = GalaxySigner.contentMd5Hex(new byte[0], 0, 0);
      Map<String, List<String>> headers = new HashMap<>();
      headers.put(GalaxySigner.TIMESTAMP, List.of(ts));
      headers.put(GalaxySigner.CONTENT_MD5, List.of(md5));
      String rawPath = URI.create(path).getRawPath();
      String sig = GalaxySigner.sign(secret, GalaxySigner.stringToSign(method, rawPath, URI.create(path).getRawQuery(), headers));
      b.header(GalaxySigner.TIMESTAMP, ts).header(GalaxySigner.CONTENT_MD5, md5)
          .header(GalaxySigner.AUTHORIZATION, "Galaxy-V3 " + keyId + ":" + sig);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
