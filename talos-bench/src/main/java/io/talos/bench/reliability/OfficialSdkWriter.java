package io.talos.bench.reliability;

import com.xiaomi.infra.galaxy.rpc.thrift.Credential;
import com.xiaomi.infra.galaxy.rpc.thrift.UserType;
import com.xiaomi.infra.galaxy.talos.admin.TalosAdmin;
import com.xiaomi.infra.galaxy.talos.client.TalosClientConfig;
import com.xiaomi.infra.galaxy.talos.producer.SimpleProducer;
import com.xiaomi.infra.galaxy.talos.producer.TalosProducerConfig;
import com.xiaomi.infra.galaxy.talos.thrift.DescribeTopicRequest;
import com.xiaomi.infra.galaxy.talos.thrift.Message;
import com.xiaomi.infra.galaxy.talos.thrift.TopicAndPartition;
import com.xiaomi.infra.galaxy.talos.thrift.TopicTalosResourceName;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * A partition writer on the official Talos SDK 2.0.2's SimpleProducer, unmodified, with the
 * server's admin credential. Its put answer carries no offset ({@code put} returns -1), so the
 * crash cycles check its acknowledged messages by payload.
 */
final class OfficialSdkWriter implements CrashCycles.PartitionWriter {
  private final SimpleProducer producer;

  private OfficialSdkWriter(SimpleProducer producer) {
    this.producer = producer;
  }

  static OfficialSdkWriter create(ServerProcess server, String topic, int partition) throws Exception {
    Properties cred = new Properties();
    try (InputStream in = Files.newInputStream(server.dataDir().resolve("admin-credential.properties"))) {
      cred.load(in);
    }
    Credential credential = new Credential().setType(UserType.APP_SECRET)
        .setSecretKeyId(cred.getProperty("secretKeyId")).setSecretKey(cred.getProperty("secretKey"));
    Properties props = new Properties();
    props.setProperty("galaxy.talos.service.endpoint", server.endpoint());
    TalosAdmin admin = new TalosAdmin(new TalosClientConfig(props), credential);
    TopicTalosResourceName rn = admin.describeTopic(new DescribeTopicRequest(topic)).getTopicInfo()
        .getTopicTalosResourceName();
    return new OfficialSdkWriter(new SimpleProducer(new TalosProducerConfig(props),
        new TopicAndPartition(topic, rn, partition), credential));
  }

  @Override
  public long put(List<byte[]> batch) throws Exception {
    List<Message> messages = new ArrayList<>(batch.size());
    for (byte[] b : batch) messages.add(new Message(ByteBuffer.wrap(b)));
    producer.putMessageList(messages);
    return -1;
  }
}
