package io.talos.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.cli.TalosCli;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.KeyHashPartitioner;
import io.talos.client.producer.ProducerRecord;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The talos CLI's topic-wide produce and consume, group commands and help, on a real server. */
class TalosCliEndToEndTest {
  @TempDir
  static Path dataDir;

  static TalosServer server;
  static TalosClient client;

  @BeforeAll
  static void start() throws Exception {
    // short lock TTL: a member that exited stops counting in its group after 3 s, not 30 s
    server = TestServers.start(dataDir, ServerConfig.CONSUMER_LOCK_TTL_MS, "3000");
    client = TalosClient.create(TalosClientConfig.builder()
        .endpoint(server.endpoint().toString())
        .credentialFile(dataDir.resolve("admin-credential.properties"))
        .build());
  }

  @AfterAll
  static void stop() {
    client.close();
    server.close();
  }

  record Result(int exit, String out, String err) {}

  static Result talos(String stdin, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = run(stdin, new PrintStream(out, true, UTF_8), err, args);
    return new Result(exit, out.toString(UTF_8), err.toString(UTF_8));
  }

  static int run(String stdin, PrintStream out, ByteArrayOutputStream err, String... args) {
    List<String> all = new ArrayList<>(Arrays.asList(args));
    if (!all.contains("--help") && !all.contains("--version")) {
      all.addAll(List.of("--endpoint", server.endpoint().toString(),
          "--credential", dataDir.resolve("admin-credential.properties").toString()));
    }
    return new TalosCli(new ByteArrayInputStream(stdin.getBytes(UTF_8)), out,
        new PrintStream(err, true, UTF_8), TalosClient::create).execute(all.toArray(String[]::new));
  }

  private static String lines(int from, int to) {
    return IntStream.range(from, to).mapToObj(i -> "m" + i + "\n").collect(Collectors.joining());
  }

  private static List<String> partition(String topic, int p) {
    List<String> got = new ArrayList<>();
    for (ConsumedMessage m : client.consumer(topic, p).fetch(SimpleConsumer.START_OFFSET, 100_000)) {
      got.add(new String(m.payload(), UTF_8));
    }
    return got;
  }

  @Test
  void produceWithoutPartitionSpreadsRoundRobinAndConsumeReadsTheWholeTopic() {
    client.admin().createTopic("spread", 4);
    Result r = talos(lines(0, 400), "produce", "spread");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.err().contains("produced 400 messages to spread (4 partitions)"), r.err());
    for (int p = 0; p < 4; p++) assertEquals(100, partition("spread", p).size(), "partition " + p);

    Result all = talos("", "consume", "spread");
    assertEquals(0, all.exit(), all.err());
    List<String> got = Arrays.asList(all.out().split("\n"));
    assertEquals(400, got.size());
    assertEquals(IntStream.range(0, 400).mapToObj(i -> "m" + i).sorted().toList(),
        got.stream().sorted().toList());
    Result offsets = talos("", "consume", "spread", "--print-offsets", "--max", "3");
    assertEquals(3, offsets.out().split("\n").length);
    assertTrue(offsets.out().matches("(?s)\\d\t\\d+\tm\\d+\n.*"), offsets.out());
  }

  @Test
  void produceWithAKeySeparatorPartitionsByTheKeyHash() {
    client.admin().createTopic("keyed", 8);
    Result r = talos("a\tfirst\norders\tsecond\na\tthird\n", "produce", "keyed",
        "--key-separator", "\t");
    assertEquals(0, r.exit(), r.err());
    // docs/clients.md test vectors: "a" -> 4, "orders" -> 4 of 8 partitions
    assertEquals(4, new KeyHashPartitioner().partition(ProducerRecord.of("a", new byte[1]), 8));
    assertEquals(List.of("first", "second", "third"), partition("keyed", 4));
    Result bad = talos("no-separator\n", "produce", "keyed", "--key-separator", "\t");
    assertEquals(TalosCli.EXIT_FAILURE, bad.exit());
    assertTrue(bad.err().contains("line 1 has no key separator"), bad.err());
    assertEquals(TalosCli.EXIT_USAGE,
        talos("", "produce", "keyed", "--key-separator", ":", "--partition", "1").exit());
  }

  @Test
  void produceShowsProgressOnStderrForLongInput() {
    client.admin().createTopic("progress", 2);
    Result r = talos(lines(0, 20_000), "produce", "progress", "--progress-after-ms", "0");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.err().contains("produce") && r.err().contains("lines"), r.err());
    assertTrue(r.err().contains("produced 20000 messages"), r.err());
    Result quiet = talos(lines(0, 10), "produce", "progress", "--progress-after-ms", "0", "--no-progress");
    assertEquals("produced 10 messages to progress (2 partitions)\n", quiet.err());
  }

  @Test
  void consumeAsAGroupCommitsAndTheNextRunResumesAndGroupCommandsShowAndResetIt() {
    client.admin().createTopic("grouped", 3);
    assertEquals(0, talos(lines(0, 30), "produce", "grouped").exit());
    Result first = talos("", "consume", "grouped", "--group", "g", "--max", "10",
        "--idle-timeout-ms", "500");
    assertEquals(0, first.exit(), first.err());
    assertEquals(10, first.out().split("\n").length);
    awaitNoMembers("grouped", "g");

    Result describe = talos("", "group", "describe", "g", "--topic", "grouped");
    assertEquals(0, describe.exit(), describe.err());
    String[] rows = describe.out().split("\n");
    assertEquals("PARTITION\tOWNER\tCOMMITTED\tEND\tLAG", rows[0]);
    assertEquals(4, rows.length);
    long lag = 0;
    for (int i = 1; i < 4; i++) lag += Long.parseLong(rows[i].split("\t")[4]);
    assertEquals(20, lag, describe.out());
    assertTrue(describe.err().contains("total lag 20"), describe.err());

    // the next member (once the exited one expired) resumes after the commits: the other 20
    awaitNoMembers("grouped", "g");
    Result second = talos("", "consume", "grouped", "--group", "g", "--idle-timeout-ms", "500");
    assertEquals(0, second.exit(), second.err());
    List<String> all = new ArrayList<>(Arrays.asList(first.out().split("\n")));
    all.addAll(Arrays.asList(second.out().split("\n")));
    assertEquals(IntStream.range(0, 30).mapToObj(i -> "m" + i).sorted().toList(), all.stream().sorted().toList());

    // reset to earliest (the previous members' locks were released at exit): all 30 again
    Result reset = talos("", "group", "reset-offsets", "g", "--topic", "grouped", "--to", "earliest");
    assertEquals(0, reset.exit(), reset.err());
    assertTrue(reset.out().contains("partition 0: group g resumes at offset 0"), reset.out());
    awaitNoMembers("grouped", "g");
    Result again = talos("", "consume", "grouped", "--group", "g", "--idle-timeout-ms", "500");
    assertEquals(30, again.out().split("\n").length);
    Result toOffset = talos("", "group", "reset-offsets", "g", "--topic", "grouped", "--to", "8",
        "--partition", "1");
    assertEquals(0, toOffset.exit(), toOffset.err());
    awaitNoMembers("grouped", "g");
    List<String> p1 = partition("grouped", 1);
    Result rest = talos("", "consume", "grouped", "--group", "g", "--idle-timeout-ms", "500",
        "--print-offsets");
    assertEquals("1\t8\t" + p1.get(8) + "\n1\t9\t" + p1.get(9) + "\n", rest.out());

    Result list = talos("", "group", "list", "--topic", "grouped");
    assertEquals(0, list.exit(), list.err());
    assertEquals("TOPIC\tGROUP\ngrouped\tg\n", list.out());
    Result allGroups = talos("", "group", "list");
    assertEquals(0, allGroups.exit(), allGroups.err());
    assertTrue(allGroups.out().startsWith("TOPIC\tGROUP\n") && allGroups.out().contains("grouped\tg\n"),
        allGroups.out());
  }

  @Test
  void consumeFromATimestampAndResetAGroupToOne() throws Exception {
    client.admin().createTopic("timed", 2);
    assertEquals(0, talos(lines(0, 10), "produce", "timed").exit());
    Thread.sleep(50);
    long t = System.currentTimeMillis(); // the server appends with this machine's clock
    Thread.sleep(50);
    assertEquals(0, talos(lines(10, 20), "produce", "timed").exit());
    List<String> later = IntStream.range(10, 20).mapToObj(i -> "m" + i).sorted().toList();

    Result from = talos("", "consume", "timed", "--from-timestamp", Long.toString(t));
    assertEquals(0, from.exit(), from.err());
    assertEquals(later, Arrays.stream(from.out().split("\n")).sorted().toList());
    Result iso = talos("", "consume", "timed", "--from", "timestamp:" + java.time.Instant.ofEpochMilli(t));
    assertEquals(from.out(), iso.out());

    Result reset = talos("", "group", "reset-offsets", "tg", "--topic", "timed", "--to", "timestamp:" + t);
    assertEquals(0, reset.exit(), reset.err());
    Result group = talos("", "consume", "timed", "--group", "tg", "--idle-timeout-ms", "500");
    assertEquals(0, group.exit(), group.err());
    assertEquals(later, Arrays.stream(group.out().split("\n")).sorted().toList());

    // a group member starting from the time (TalosConsumer start.from=TIMESTAMP)
    Result member = talos("", "consume", "timed", "--group", "tg2", "--from-timestamp", Long.toString(t),
        "--idle-timeout-ms", "500");
    assertEquals(0, member.exit(), member.err());
    assertEquals(later, Arrays.stream(member.out().split("\n")).sorted().toList());

    Result bad = talos("", "consume", "timed", "--from-timestamp", "yesterday");
    assertEquals(2, bad.exit());
    assertTrue(bad.err().contains("not a time"), bad.err());
  }

  /** Waits until no member of the group is registered (exited members expire with the TTL). */
  private static void awaitNoMembers(String topic, String group) {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!client.consumerGroups().workers(topic, group).isEmpty()) {
      assertTrue(System.nanoTime() < deadline, "members of " + group + " did not expire");
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }

  @Test
  void consumeStopsQuietlyWhenStdoutIsClosed() {
    client.admin().createTopic("pipe", 2);
    assertEquals(0, talos(lines(0, 5000), "produce", "pipe").exit());
    for (String[] args : List.of(new String[] {"consume", "pipe"},
        new String[] {"consume", "pipe", "--follow"},
        new String[] {"consume", "pipe", "--group", "h", "--follow"})) {
      // like `| head -c 100`: the reader goes away, writes fail
      OutputStream closing = new OutputStream() {
        int written;

        @Override
        public void write(int b) throws IOException {
          if (++written > 100) throw new IOException("Broken pipe");
        }
      };
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int exit = run("", new PrintStream(closing, false, UTF_8), err, args);
      assertEquals(0, exit, String.join(" ", args) + ": " + err.toString(UTF_8));
      assertEquals("", err.toString(UTF_8), String.join(" ", args));
    }
  }

  @Test
  void consumeFollowRidesOutAServerRestart(@TempDir Path dir) throws Exception {
    TalosServer first = TestServers.start(dir);
    int port = first.port();
    String endpoint = first.endpoint().toString();
    String credential = dir.resolve("admin-credential.properties").toString();
    TalosClientConfig config = TalosClientConfig.builder().endpoint(endpoint)
        .credentialFile(Path.of(credential)).build();
    try (TalosClient c = TalosClient.create(config)) {
      c.admin().createTopic("restart", 1);
      c.producer("restart", 0).put(List.of("a".getBytes(UTF_8), "b".getBytes(UTF_8)));
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int[] exit = {-1};
    Thread cli = new Thread(() -> exit[0] = new TalosCli(new ByteArrayInputStream(new byte[0]),
        new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8), TalosClient::create)
        .execute("consume", "restart", "--follow", "--max", "4", "--poll-interval-ms", "50",
            "--request-timeout-ms", "2000", "--endpoint", endpoint, "--credential", credential));
    cli.start();
    TalosServer second = null;
    try {
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (!out.toString(UTF_8).equals("a\nb\n")) {
        assertTrue(System.nanoTime() < deadline, "first messages: " + out.toString(UTF_8));
        Thread.sleep(20);
      }
      first.close();
      Thread.sleep(500); // the CLI meets a refused connection
      second = TestServers.start(dir, ServerConfig.PORT, Integer.toString(port));
      try (TalosClient c = TalosClient.create(config)) {
        c.producer("restart", 0).put(List.of("c".getBytes(UTF_8), "d".getBytes(UTF_8)));
      }
      cli.join(60_000);
      assertFalse(cli.isAlive(), "consume --follow did not finish");
      assertEquals(0, exit[0], err.toString(UTF_8));
      assertEquals("a\nb\nc\nd\n", out.toString(UTF_8));
      assertTrue(err.toString(UTF_8).contains("retrying"), err.toString(UTF_8));
    } finally {
      cli.interrupt();
      if (second != null) second.close();
      first.close();
    }
  }

  /**
   * consume --group --follow long-polls: each new message is printed well before
   * --poll-interval-ms, and reaching --max ends the command at once although the server still
   * holds the other partition's fetch.
   */
  @Test
  void consumeAsAGroupFollowingPrintsNewMessagesPromptlyAndExitsWhileAFetchIsHeld() throws Exception {
    client.admin().createTopic("follow-group", 2);
    client.producer("follow-group", 0).put(List.of("f0".getBytes(UTF_8)));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int[] exit = {-1};
    long pollIntervalMs = 4_000;
    Thread cli = new Thread(() -> exit[0] = run("", new PrintStream(out, true, UTF_8), err,
        "consume", "follow-group", "--group", "fg", "--follow", "--max", "3",
        "--poll-interval-ms", Long.toString(pollIntervalMs)));
    cli.start();
    try {
      awaitOutput(out, "f0\n", 30_000);
      for (int i = 1; i <= 2; i++) {
        long t0 = System.nanoTime();
        client.producer("follow-group", 0).put(List.of(("f" + i).getBytes(UTF_8)));
        StringBuilder expected = new StringBuilder();
        for (int j = 0; j <= i; j++) expected.append("f").append(j).append('\n');
        awaitOutput(out, expected.toString(), 30_000);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < pollIntervalMs / 2, "message " + i + " printed after " + ms + " ms");
      }
      long t0 = System.nanoTime();
      cli.join(30_000);
      long exitMs = (System.nanoTime() - t0) / 1_000_000;
      assertFalse(cli.isAlive(), "consume --group --follow --max 3 did not finish");
      assertEquals(0, exit[0], err.toString(UTF_8));
      assertTrue(exitMs < 3_000, "exit took " + exitMs + " ms while partition 1's fetch was held");
      assertEquals(2, client.consumerGroups().describe("follow-group", "fg").get(0).committedOffset());
    } finally {
      cli.interrupt();
    }
  }

  private static void awaitOutput(ByteArrayOutputStream out, String expected, long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000;
    while (!out.toString(UTF_8).equals(expected)) {
      assertTrue(System.nanoTime() < deadline, "expected " + expected + ", printed: " + out.toString(UTF_8));
      Thread.sleep(5);
    }
  }

  @Test
  void versionAndEverySubcommandsHelpAreComplete() {
    Result version = talos("", "--version");
    assertEquals(0, version.exit());
    assertTrue(version.out().matches("talos \\S+\n"), version.out());
    String[][] commands = {{"topic", "create"}, {"topic", "list"}, {"topic", "describe"},
        {"topic", "alter"}, {"topic", "offsets"}, {"topic", "delete"}, {"partition", "reset"},
        {"produce"}, {"consume"}, {"group", "list"}, {"group", "describe"},
        {"group", "reset-offsets"}};
    for (String[] c : commands) {
      List<String> args = new ArrayList<>(Arrays.asList(c));
      args.add("--help");
      Result help = talos("", args.toArray(String[]::new));
      assertEquals(0, help.exit(), String.join(" ", c));
      assertTrue(help.out().contains("Usage: talos " + String.join(" ", c)), help.out());
      assertTrue(help.out().contains("--endpoint"),
          String.join(" ", c) + " lists the connection options: " + help.out());
    }
    String consume = talos("", "consume", "--help").out();
    for (String option : List.of("--partition", "--group", "--from", "--max", "--follow",
        "--print-offsets", "--idle-timeout-ms")) {
      assertTrue(consume.contains(option), option);
    }
    String produce = talos("", "produce", "--help").out();
    for (String option : List.of("--partition", "--key-separator", "--batch", "--linger-ms",
        "--compression", "--no-progress")) {
      assertTrue(produce.contains(option), option);
    }
    assertFalse(produce.contains("--progress-after-ms"), "test-only option stays hidden");
  }
}
