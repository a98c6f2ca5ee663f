package io.talos.server.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * {@code GET /ops/cluster}: {@link ClusterNode#status()} as JSON ({"node", "serving",
 * "assignmentVersion", "ownedPartitions", "quotaShare", "loadShedding", "loadMeasured", "partitions",
 * "nodes":[{"id","apiUrl","state","capacity","load","loadShedding","factor","vnodes","partitions"}]}). {@code POST /ops/cluster/drain?node=ID}: requests the drain of member ID
 * (202); accepted only from a loopback address (the ops port is unauthenticated), 403 otherwise.
 * Other paths pass to the next handler. Thread-safe.
 */
public final class ClusterOpsHandler extends Handler.Abstract {
  public static final String PATH = "/ops/cluster";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ClusterNode node;

  public ClusterOpsHandler(ClusterNode node) {
    this.node = node;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = request.getHttpURI().getPath();
    ObjectNode body;
    int status = 200;
    if (PATH.equals(path) && "GET".equals(request.getMethod())) {
      body = node.status();
    } else if ((PATH + "/drain").equals(path) && "POST".equals(request.getMethod())) {
      body = JSON.createObjectNode();
      String target = Request.extractQueryParameters(request).getValue("node");
      if (!isLoopback(request.getConnectionMetaData().getRemoteSocketAddress())) {
        status = 403;
        body.put("error", "drain is accepted only from the node's own host (loopback); run bin/talos cluster drain there");
      } else if (target == null || target.isEmpty()) {
        status = 400;
        body.put("error", "missing query parameter node=<node id>");
      } else {
        try {
          node.requestDrain(target);
          status = 202;
          body.put("draining", target);
        } catch (IllegalArgumentException e) {
          status = 400;
          body.put("error", e.getMessage());
        }
      }
    } else {
      return false;
    }
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.write(true, ByteBuffer.wrap(JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(body)), callback);
    return true;
  }

  private static boolean isLoopback(SocketAddress a) {
    if (!(a instanceof InetSocketAddress in)) return false;
    InetAddress addr = in.getAddress();
    return addr != null && addr.isLoopbackAddress();
  }
}
