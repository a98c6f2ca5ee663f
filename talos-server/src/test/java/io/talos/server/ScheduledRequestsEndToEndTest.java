package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Histogram;
import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.SimpleProducer;
import io.talos.server.scheduling.PoolMetrics;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Puts and gets through the task pool, over HTTP, in both scheduling modes. */
class ScheduledRequestsEndToEndTest {
  @TempDir
  Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"least-loaded", "hashed"})
  void concurrentProducersOnManyPartitionsGetEveryMessageBackInOrder(String selector) throws Exception {
    int partitions = 12;
    int producers = 24;
    int batches = 40;
    try (TalosServer server = TestServers.start(dir, ServerConfig.SCHEDULING_SELECTOR, selector,
        ServerConfig.SCHEDULING_WORKERS, "4");
        TalosClient client = TalosClient.create(TalosClientConfig.builder()
            .endpoint(server.endpoint().toString())
            .credentialFile(dir.resolve("admin-credential.properties")).build())) {
      client.admin().createTopic("busy", partitions);
      ExecutorService threads = Executors.newFixedThreadPool(producers);
      List<Future<?>> done = new ArrayList<>();
      // Producer t writes to partition t % partitions, so two producers share each partition and
      // their puts interleave (and merge in group commits); each producer's own messages must
      // come back in the order it sent them.
      for (int t = 0; t < producers; t++) {
        int producer = t;
        done.add(threads.submit(() -> {
          SimpleProducer p = client.producer("busy", producer % partitions);
          for (int b = 0; b < batches; b++) {
            List<byte[]> batch = new ArrayList<>();
            for (int i = 0; i < 5; i++) batch.add((producer + ":" + (b * 5 + i)).getBytes(StandardCharsets.UTF_8));
            p.put(batch);
          }
          return null;
        }));
      }
      for (Future<?> f : done) f.get(120, TimeUnit.SECONDS);
      threads.shutdown();

      int total = 0;
      for (int p = 0; p < partitions; p++) {
        SimpleConsumer consumer = client.consumer("busy", p);
        List<ConsumedMessage> all = new ArrayList<>();
        for (List<ConsumedMessage> page = consumer.fetch(0, 1000); !page.isEmpty();
            page = consumer.fetch(all.get(all.size() - 1).offset() + 1, 1000)) {
          all.addAll(page);
        }
        int[] nextSeq = new int[producers];
        for (int i = 0; i < all.size(); i++) {
          assertEquals(i, all.get(i).offset(), "offsets are dense");
          String[] parts = new String(all.get(i).payload(), StandardCharsets.UTF_8).split(":");
          int producer = Integer.parseInt(parts[0]);
          assertEquals(p, producer % partitions, "message in the wrong partition");
          assertEquals(nextSeq[producer]++, Integer.parseInt(parts[1]), "producer " + producer + " out of order");
        }
        total += all.size();
      }
      assertEquals(producers * batches * 5, total);
      Histogram batchSizes = server.metrics().histogram(PoolMetrics.BATCH_SIZE);
      assertTrue(batchSizes.getCount() > 0, "puts went through the pool");
    }
  }

  @Test
  void aRequestPastItsDeadlineIsAnsweredWithoutTouchingStorage() throws Exception {
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
      TopicTalosResourceName trn = api.createTopic("late", 1);
      TopicAndPartition tap = new TopicAndPartition("late", trn, 0);
      byte[] payload = RawApi.noneBlock("too late".getBytes(StandardCharsets.UTF_8));
      PutMessageRequest expired = new PutMessageRequest(tap, List.of(new MessageBlock(0, 1, MessageCompressionType.NONE,
          ByteBuffer.wrap(payload))), 1, "late#1").setTimeoutTimestamp(System.currentTimeMillis() - 1000);
      GalaxyTalosException e = api.call("message", "putMessage", new MessageService.putMessage_args(expired),
          new MessageService.putMessage_result()).getE();
      assertEquals(ErrorCode.REQUEST_PROCESS_TIMEOUT, e.getErrorCode());
      assertTrue(e.getErrMsg().contains("nothing was written"), e.getErrMsg());
      assertTrue(api.readAll(tap, 0).isEmpty(), "nothing stored");
      assertEquals(1, server.metrics().meter(PoolMetrics.EXPIRED).getCount());
      assertEquals(0, api.put(tap, List.of("in time")), "the partition is untouched and writable");
    }
  }

  @Test
  void aClientDeadlineIsJudgedOnTheClientsOwnClock() throws Exception {
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
      TopicTalosResourceName trn = api.createTopic("skewed", 1);
      TopicAndPartition tap = new TopicAndPartition("skewed", trn, 0);
      // A client whose clock is 20 s behind asks for 10 s: on the server's clock that deadline
      // is 10 s in the past, on the client's it is 10 s ahead; the server must serve it.
      long clientNowSecs = System.currentTimeMillis() / 1000 - 20;
      PutMessageRequest put = new PutMessageRequest(tap, List.of(new MessageBlock(0, 1, MessageCompressionType.NONE,
          ByteBuffer.wrap(RawApi.noneBlock("on time".getBytes(StandardCharsets.UTF_8))))), 1, "skew#1")
          .setTimeoutTimestamp(clientNowSecs * 1000 + 10_000);
      java.net.http.HttpResponse<byte[]> response = api.send("POST", "/v1/api/message", "putMessage",
          RawApi.call("putMessage", new MessageService.putMessage_args(put)), clientNowSecs,
          server.adminCredential().secretKey(), null, "talos-java-client/test");
      MessageService.putMessage_result r = RawApi.reply(response.body(), new MessageService.putMessage_result());
      assertTrue(!r.isSetE(), () -> "refused: " + r.getE());
      assertEquals(0, r.getSuccess().getStartMessageOffset());
    }
  }

  @Test
  void aStalledStorageCallIsAnsweredAtItsDeadlineAndDoesNotHoldUpOtherPartitions() throws Exception {
    String root = "stall://" + dir.resolve("log").toAbsolutePath();
    try (TalosServer server = TestServers.start(dir, ServerConfig.STORAGE_ROOT_URI, root,
        "hadoop.fs.stall.impl", StallingFileSystem.class.getName(), "hadoop.fs.stall.impl.disable.cache", "true",
        ServerConfig.SCHEDULING_WORKERS, "2")) {
      RawApi api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
      TopicTalosResourceName trn = api.createTopic("stalls", 2);
      TopicAndPartition p0 = new TopicAndPartition("stalls", trn, 0);
      TopicAndPartition p1 = new TopicAndPartition("stalls", trn, 1);
      assertEquals(0, api.put(p0, List.of("warm")));
      assertEquals(0, api.put(p1, List.of("warm")));
      ExecutorService client = Executors.newSingleThreadExecutor();
      StallingFileSystem.stall("/" + io.talos.server.storage.PartitionLogs.encodeDirName(trn.getTopicTalosResourceName())
          + "/1/");
      try {
        PutMessageRequest put = new PutMessageRequest(p1, List.of(new MessageBlock(0, 1, MessageCompressionType.NONE,
            ByteBuffer.wrap(RawApi.noneBlock("stuck".getBytes(StandardCharsets.UTF_8))))), 1, "stuck#1")
            .setTimeoutTimestamp(System.currentTimeMillis() + 1_500);
        Future<MessageService.putMessage_result> stalled = client.submit(() -> api.call("message", "putMessage",
            new MessageService.putMessage_args(put), new MessageService.putMessage_result()));
        assertTrue(StallingFileSystem.stalled.await(30, TimeUnit.SECONDS), "the put reached storage and hangs there");

        // Partition 1's append hangs in the file system; partition 0 is served meanwhile.
        assertEquals(1, api.put(p0, List.of("free")));
        assertTrue(!stalled.isDone(), "answered before its deadline although storage never answered");

        // Partition 1's request is answered at its deadline, while storage still hangs.
        MessageService.putMessage_result r = stalled.get(30, TimeUnit.SECONDS);
        assertTrue(StallingFileSystem.stallPathsContaining != null, "storage was released before the answer");
        assertEquals(ErrorCode.REQUEST_PROCESS_TIMEOUT, r.getE().getErrorCode(), () -> String.valueOf(r));
        assertTrue(r.getE().getErrMsg().contains("may or may not have been stored"), r.getE().getErrMsg());
        assertEquals(2, api.put(p0, List.of("still free")), "the worker is free again");
      } finally {
        StallingFileSystem.release();
        client.shutdownNow();
      }
      // Once storage answers, the partition works again (the stalled put may have been stored).
      long next = api.put(p1, List.of("after"));
      assertTrue(next == 1 || next == 2, "offset " + next);
    }
  }
}
