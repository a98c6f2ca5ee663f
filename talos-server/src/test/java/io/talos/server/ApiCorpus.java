package io.talos.server;

import io.talos.thrift.ChangeTopicAttributeRequest;
import io.talos.thrift.ClusterService;
import io.talos.thrift.CreateCredentialRequest;
import io.talos.thrift.CredentialService;
import io.talos.thrift.GetScheduleInfoRequest;
import io.talos.thrift.RevokeCredentialRequest;
import io.talos.thrift.RotateCredentialRequest;
import io.talos.thrift.CheckPoint;
import io.talos.thrift.ConsumeUnit;
import io.talos.thrift.ConsumerService;
import io.talos.thrift.CreateTopicRequest;
import io.talos.thrift.DeleteTopicQuotaRequest;
import io.talos.thrift.DeleteUserQuotaRequest;
import io.talos.thrift.DescribeTopicRequest;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.GetPartitionOffsetRequest;
import io.talos.thrift.GetPartitionsOffsetRequest;
import io.talos.thrift.GetTopicOffsetRequest;
import io.talos.thrift.Grantee;
import io.talos.thrift.GrantType;
import io.talos.thrift.LockPartitionRequest;
import io.talos.thrift.LockWorkerRequest;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import io.talos.thrift.Permission;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.QueryOffsetRequest;
import io.talos.thrift.QueryWorkerRequest;
import io.talos.thrift.QuotaService;
import io.talos.thrift.RenewRequest;
import io.talos.thrift.SetPermissionRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicAttribute;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.thrift.UnlockPartitionRequest;
import io.talos.thrift.UpdateOffsetRequest;
import io.talos.thrift.Version;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.thrift.TBase;

/**
 * Valid calls of every method of the API services (the four of the SDK, CredentialService and
 * ClusterService), the starting points of the fuzz test and
 * of the malformed-body test. They name the topic {@code fuzz} by a resource name whose unique
 * suffix is {@link #SUFFIX_PLACEHOLDER}: {@link #bind} puts the real suffix in (same length, so
 * the encoding stays valid), which lets stored seed files work against any server.
 */
final class ApiCorpus {
  /** The endpoints, in the order of an input's first byte (new ones are appended: stored inputs keep their meaning). */
  static final List<String> SERVICES = List.of("message", "topic", "consumer", "quota", "credential", "cluster");
  static final String TOPIC = "fuzz";
  static final String SUFFIX_PLACEHOLDER = "FUZZFUZZFUZZFUZZ";

  private ApiCorpus() {}

  /** One call: the API path segment, the method (the {@code type} query parameter), the body. */
  record Seed(String service, String method, byte[] body) {}

  /** Method names of each service, sorted. */
  static Map<String, List<String>> methods() {
    Map<String, List<String>> m = new LinkedHashMap<>();
    m.put("message", new ArrayList<>(new TreeSet<>(new MessageService.Processor<>(null).getProcessMapView().keySet())));
    m.put("topic", new ArrayList<>(new TreeSet<>(new TopicService.Processor<>(null).getProcessMapView().keySet())));
    m.put("consumer", new ArrayList<>(new TreeSet<>(new ConsumerService.Processor<>(null).getProcessMapView().keySet())));
    m.put("quota", new ArrayList<>(new TreeSet<>(new QuotaService.Processor<>(null).getProcessMapView().keySet())));
    m.put("credential", new ArrayList<>(new TreeSet<>(
        new CredentialService.Processor<>(null).getProcessMapView().keySet())));
    m.put("cluster", new ArrayList<>(new TreeSet<>(new ClusterService.Processor<>(null).getProcessMapView().keySet())));
    return m;
  }

  /** A valid call of every method of every service, with the placeholder resource name. */
  static List<Seed> seeds() throws Exception {
    TopicTalosResourceName trn = new TopicTalosResourceName("admin#" + TOPIC + "#" + SUFFIX_PLACEHOLDER);
    TopicAndPartition tap = new TopicAndPartition(TOPIC, trn, 0);
    ConsumeUnit unit = new ConsumeUnit("group", trn, List.of(0, 1), "worker-1");
    MessageBlock block = new MessageBlock(0, 2, MessageCompressionType.NONE, ByteBuffer.wrap(RawApi.noneBlock(
        "hello".getBytes(StandardCharsets.UTF_8), "world".getBytes(StandardCharsets.UTF_8))));
    Version version = new Version(2, 0, 2, "2016-11-15");
    Map<String, TBase<?, ?>> args = new LinkedHashMap<>();
    args.put("message.putMessage", new MessageService.putMessage_args(new PutMessageRequest(tap, List.of(block), 2, "c#1")
        .setTimeoutTimestamp(Long.MAX_VALUE / 2)));
    args.put("message.getMessage", new MessageService.getMessage_args(new GetMessageRequest(tap, 0, "c#2")
        .setMaxGetMessageNumber(10).setMaxGetMessageBytes(1 << 20).setShowUnHandledMessageNumber(true)));
    args.put("message.getTopicOffset", new MessageService.getTopicOffset_args(new GetTopicOffsetRequest(trn)));
    args.put("message.getPartitionOffset", new MessageService.getPartitionOffset_args(new GetPartitionOffsetRequest(tap)));
    args.put("message.getPartitionsOffset", new MessageService.getPartitionsOffset_args(
        new GetPartitionsOffsetRequest(List.of(tap, new TopicAndPartition(TOPIC, trn, 1)))));
    args.put("topic.createTopic", new TopicService.createTopic_args(new CreateTopicRequest("fuzz-new",
        new TopicAttribute().setPartitionNumber(2).setMessageRetentionSecs(3600).setAttributes(Map.of("k", "v")))
        .setAclMap(Map.of(new Grantee().setType(GrantType.DEVELOPER).setIdentifier("dev"), Permission.FULL_CONTROL))));
    args.put("topic.changeTopicAttribute", new TopicService.changeTopicAttribute_args(new ChangeTopicAttributeRequest(trn,
        new TopicAttribute().setPartitionNumber(3).setAttributes(Map.of("owner", "fuzz")))));
    args.put("topic.describeTopic", new TopicService.describeTopic_args(new DescribeTopicRequest(TOPIC)));
    args.put("topic.deleteTopicQuota", new TopicService.deleteTopicQuota_args(new DeleteTopicQuotaRequest(trn)));
    args.put("topic.setPermission", new TopicService.setPermission_args(new SetPermissionRequest(trn,
        new Grantee().setType(GrantType.APP_USER).setIdentifier("app"), Permission.GET_MESSAGE)));
    args.put("consumer.lockWorker", new ConsumerService.lockWorker_args(new LockWorkerRequest(unit)));
    args.put("consumer.lockPartition", new ConsumerService.lockPartition_args(new LockPartitionRequest(unit)));
    args.put("consumer.unlockPartition", new ConsumerService.unlockPartition_args(new UnlockPartitionRequest(unit)));
    args.put("consumer.renew", new ConsumerService.renew_args(new RenewRequest(unit)));
    args.put("consumer.updateOffset", new ConsumerService.updateOffset_args(new UpdateOffsetRequest(
        new CheckPoint("group", tap, 1, "worker-1").setLastCommitOffset(0))));
    args.put("consumer.queryOffset", new ConsumerService.queryOffset_args(new QueryOffsetRequest("group", tap)));
    args.put("consumer.queryWorker", new ConsumerService.queryWorker_args(new QueryWorkerRequest("group", trn)));
    args.put("quota.deleteUserQuota", new QuotaService.deleteUserQuota_args(new DeleteUserQuotaRequest("dev")));
    // Key ids the fuzzer cannot know (the admin's and every created one are random): rotate and
    // revoke reach the service's checks, never the credential the fuzz client signs with.
    args.put("credential.createCredential", new CredentialService.createCredential_args(
        new CreateCredentialRequest("fuzz-user")));
    args.put("credential.rotateCredential", new CredentialService.rotateCredential_args(
        new RotateCredentialRequest("TK0123456789ABCDEF").setGraceMs(60_000)));
    args.put("credential.revokeCredential", new CredentialService.revokeCredential_args(
        new RevokeCredentialRequest("TK0123456789ABCDEF")));
    args.put("cluster.getScheduleInfo", new ClusterService.getScheduleInfo_args(new GetScheduleInfoRequest(TOPIC)));
    List<Seed> seeds = new ArrayList<>();
    for (Map.Entry<String, List<String>> service : methods().entrySet()) {
      for (String method : service.getValue()) {
        TBase<?, ?> a = args.get(service.getKey() + "." + method);
        if (a == null && method.equals("validClientVersion")) a = argsOf(service.getKey(), method, version);
        if (a == null) a = argsOf(service.getKey(), method, null);
        seeds.add(new Seed(service.getKey(), method, RawApi.call(method, a)));
      }
    }
    return seeds;
  }

  /** The empty (or version-carrying) {@code *_args} struct of a method without a specific seed. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  private static TBase<?, ?> argsOf(String service, String method, Version version) {
    Map functions = switch (service) {
      case "message" -> new MessageService.Processor<>(null).getProcessMapView();
      case "topic" -> new TopicService.Processor<>(null).getProcessMapView();
      case "consumer" -> new ConsumerService.Processor<>(null).getProcessMapView();
      case "credential" -> new CredentialService.Processor<>(null).getProcessMapView();
      case "cluster" -> new ClusterService.Processor<>(null).getProcessMapView();
      default -> new QuotaService.Processor<>(null).getProcessMapView();
    };
    TBase args = ((org.apache.thrift.ProcessFunction) functions.get(method)).getEmptyArgsInstance();
    if (version != null) args.setFieldValue(args.fieldForId(1), version);
    return args;
  }

  /** {@code body} with every placeholder suffix replaced by {@code suffix} (same length). */
  static byte[] bind(byte[] body, String suffix) {
    byte[] from = SUFFIX_PLACEHOLDER.getBytes(StandardCharsets.US_ASCII);
    byte[] to = suffix.getBytes(StandardCharsets.US_ASCII);
    if (to.length != from.length) throw new IllegalArgumentException("suffix " + suffix + " is not 16 characters");
    byte[] out = body.clone();
    outer:
    for (int i = 0; i + from.length <= out.length; i++) {
      for (int j = 0; j < from.length; j++) if (out[i + j] != from[j]) continue outer;
      System.arraycopy(to, 0, out, i, to.length);
    }
    return out;
  }

  /** The unique suffix of a resource name {@code owner#topic#suffix}. */
  static String suffixOf(TopicTalosResourceName trn) {
    String s = trn.getTopicTalosResourceName();
    return s.substring(s.lastIndexOf('#') + 1);
  }
}
