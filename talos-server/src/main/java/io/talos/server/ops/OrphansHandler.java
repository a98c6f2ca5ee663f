package io.talos.server.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.talos.server.service.TopicDeletions;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * {@code GET /ops/orphans}: the topic directories that belong to no topic and have no pending
 * deletion, as of the last pass of {@link TopicDeletions} (at startup, then every {@code
 * storage.topic.deletion.check.interval.ms}):
 * <pre>
 * {"orphans":[{"resourceName":"alice#t1#8f3a","path":"file:/data/log/alice.23t1.238f3a"}]}
 * </pre>
 * Talos never deletes them; an operator does, or restores the metadata they belong to.
 * Unauthenticated and read-only like the rest of {@code /ops/}; other paths pass to the next
 * handler. Thread-safe.
 */
public final class OrphansHandler extends Handler.Abstract {
  public static final String PATH = OpsHandler.PREFIX + "orphans";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final TopicDeletions deletions;

  public OrphansHandler(TopicDeletions deletions) {
    this.deletions = deletions;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    if (!PATH.equals(request.getHttpURI().getPath()) || !"GET".equals(request.getMethod())) {
      return false; // OpsHandler answers wrong methods on /ops/ paths
    }
    ObjectNode body = JSON.createObjectNode();
    ArrayNode list = body.putArray("orphans");
    for (TopicDeletions.Orphan o : deletions.orphans()) {
      list.addObject().put("resourceName", o.resourceName()).put("path", o.path());
    }
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.write(true, ByteBuffer.wrap(JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(body)), callback);
    return true;
  }
}
