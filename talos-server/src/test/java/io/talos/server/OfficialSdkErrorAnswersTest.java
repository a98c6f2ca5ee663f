package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.xiaomi.infra.galaxy.rpc.thrift.Credential;
import com.xiaomi.infra.galaxy.rpc.thrift.UserType;
import com.xiaomi.infra.galaxy.talos.admin.TalosAdmin;
import com.xiaomi.infra.galaxy.talos.client.TalosClientConfig;
import com.xiaomi.infra.galaxy.talos.thrift.CreateTopicRequest;
import com.xiaomi.infra.galaxy.talos.thrift.ErrorCode;
import com.xiaomi.infra.galaxy.talos.thrift.GalaxyTalosException;
import com.xiaomi.infra.galaxy.talos.thrift.TopicAttribute;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the unmodified Talos SDK 2.0.2 sees this server's error answers: an argument over a limit is
 * a GalaxyTalosException naming the field and the limit; an error answered before a call runs
 * (here a 413) is read from its Thrift body as a TApplicationException with the server's message,
 * not an opaque HTTP transport error.
 */
class OfficialSdkErrorAnswersTest {
  @TempDir
  static Path dataDir;

  static TalosServer server;
  static TalosAdmin admin;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir, ServerConfig.REQUEST_MAX_BYTES, "65536", ServerConfig.REQUEST_MAP_MAX_ENTRIES, "4");
    Properties props = new Properties();
    props.setProperty("galaxy.talos.service.endpoint", server.endpoint().toString());
    Credential credential = new Credential().setType(UserType.APP_SECRET)
        .setSecretKeyId(server.adminCredential().secretKeyId())
        .setSecretKey(server.adminCredential().secretKey());
    admin = new TalosAdmin(new TalosClientConfig(props), credential);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static CreateTopicRequest withAttributes(String name, int entries, int valueChars) {
    Map<String, String> attributes = new LinkedHashMap<>();
    for (int i = 0; i < entries; i++) attributes.put("k" + i, "v".repeat(valueChars));
    return new CreateTopicRequest(name, new TopicAttribute().setPartitionNumber(1).setAttributes(attributes));
  }

  @Test
  void argumentsOverALimitAreAGalaxyTalosExceptionNamingTheField() {
    GalaxyTalosException e = assertThrows(GalaxyTalosException.class, () -> admin.createTopic(withAttributes("sdk-map", 5, 1)));
    assertEquals(ErrorCode.INVALID_TOPIC_PARAMS, e.getErrorCode()); // INVALID_REQUEST_PARAMS as SDK 2.0.2 knows it
    assertEquals("request.topicAttribute.attributes has 5 entries; at most 4 (request.map.max.entries)", e.getErrMsg());
  }

  @Test
  void errorsBeforeTheCallAreThriftExceptionsWithTheServersMessage() {
    Exception e = assertThrows(Exception.class, () -> admin.createTopic(withAttributes("sdk-big", 1, 70_000)));
    Throwable t = e;
    while (t != null && !t.getClass().getName().equals("libthrift091.TApplicationException")) t = t.getCause();
    assertTrue(t != null, "not a TApplicationException: " + e);
    assertTrue(t.getMessage().contains("exceeds the limit of 65536 bytes (server.request.max.bytes)"), t.getMessage());
  }
}
