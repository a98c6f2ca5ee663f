package io.talos.client.cli;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.FakeTalosServer;
import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.codec.CompressionType;
import io.talos.client.internals.ClientVersion;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

class TalosCliTest {
  record Result(int exit, String out, String err) {}

  @TempDir
  Path dir;
  private FakeTalosServer server;
  private Path credential;

  @BeforeEach
  void start() throws Exception {
    server = new FakeTalosServer();
    credential = dir.resolve("admin-credential.properties");
    Files.writeString(credential, "secretKeyId=" + FakeTalosServer.KEY_ID + "\nsecretKey="
        + FakeTalosServer.SECRET + "\n");
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void shouldCreateListDescribeAlterAndDeleteTopics() {
    Result created = talos("", "topic", "create", "orders", "--partitions", "3",
        "--retention-secs", "600");
    assertEquals(0, created.exit(), created.err());
    assertTrue(created.out().startsWith("created topic orders with 3 partitions (resource name "
        + "owner#orders#"), created.out());
    talos("", "topic", "create", "audit", "--partitions", "1");

    assertEquals("orders\naudit\n", talos("", "topic", "list").out());
    assertTrue(talos("", "topic", "list", "-l").out().startsWith("orders\towner#orders#"));

    Result described = talos("", "topic", "describe", "orders");
    assertEquals(0, described.exit(), described.err());
    assertTrue(described.out().contains("partitions:     3\n"), described.out());
    assertTrue(described.out().contains("retention:      600 s\n"), described.out());
    assertTrue(described.out().contains("PARTITION"), described.out());

    assertEquals(0, talos("", "topic", "alter", "orders", "--partitions", "4").exit());
    assertTrue(talos("", "topic", "describe", "orders").out().contains("partitions:     4\n"));

    assertEquals("0\t0\t-1\n", talos("", "topic", "offsets", "audit").out());

    assertEquals("deleted topic orders\n", talos("", "topic", "delete", "orders").out());
    assertEquals("audit\n", talos("", "topic", "list").out());
  }

  @Test
  void shouldProduceStdinLinesAndConsumeThem() {
    talos("", "topic", "create", "orders", "--partitions", "2");

    Result produced = talos("one\ntwo\r\n\nthree", "produce", "orders", "--partition", "1",
        "--batch", "2", "--compression", "snappy");
    assertEquals(0, produced.exit(), produced.err());
    assertEquals("produced 3 messages to orders partition 1, offsets 0..2, skipped 1 empty lines\n",
        produced.err());

    assertEquals("one\ntwo\nthree\n", talos("", "consume", "orders", "--partition", "1").out());
    assertEquals("0\tone\n1\ttwo\n2\tthree\n",
        talos("", "consume", "orders", "--partition", "1", "--print-offsets").out());
    assertEquals("two\n",
        talos("", "consume", "orders", "--partition", "1", "--from", "1", "--max", "1").out());
    assertEquals("", talos("", "consume", "orders", "--partition", "1", "--from", "latest").out());
    // without --partition: the whole topic (partition 0 is empty)
    assertEquals("one\ntwo\nthree\n", talos("", "consume", "orders").out());
    assertEquals("1\t0\tone\n1\t1\ttwo\n1\t2\tthree\n",
        talos("", "consume", "orders", "--print-offsets").out());
  }

  @Test
  void shouldSendWholeBatchesFromAPipe() throws Exception {
    talos("", "topic", "create", "orders", "--partitions", "1");
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < 250; i++) lines.append("line-").append(i).append('\n');

    assertEquals(0, talos(lines.toString(), "produce", "orders", "--batch", "100").exit());

    List<Integer> blockSizes = new ArrayList<>();
    for (MessageBlock b : server.storedBlocks("orders", 0)) {
      blockSizes.add(b.getMessageNumber());
      assertEquals(MessageCompressionType.NONE, b.getCompressionType());
    }
    assertEquals(List.of(100, 100, 50), blockSizes);
  }

  @Test
  void shouldFollowNewMessagesUntilMax() throws Exception {
    talos("", "topic", "create", "orders", "--partitions", "1");
    talos("a\nb\n", "produce", "orders");
    CompletableFuture<Result> follower = CompletableFuture.supplyAsync(() -> talos("",
        "consume", "orders", "--follow", "--max", "3", "--poll-interval-ms", "20"));
    talos("c\n", "produce", "orders");
    Result followed = follower.get(20, TimeUnit.SECONDS);
    assertEquals(0, followed.exit(), followed.err());
    assertEquals("a\nb\nc\n", followed.out());
  }

  @Test
  void shouldPrintTheErrorCodeAndExitWithOne() {
    Result r = talos("", "topic", "describe", "nope");
    assertEquals(TalosCli.EXIT_FAILURE, r.exit());
    assertEquals("error: TOPIC_NOT_EXIST(5): topic 'nope' does not exist\n", r.err());

    Result verbose = talos("", "topic", "describe", "nope", "--verbose");
    assertTrue(verbose.err().contains("\tat io.talos.client"), verbose.err());
  }

  @Test
  void shouldNameTheSubcommandsOfACommandGivenWithoutOne() {
    Map<String, String> expected = Map.of(
        "topic", "create, list, describe, alter, offsets or delete",
        "partition", "reset",
        "acl", "set, revoke or list",
        "user", "create, list, rotate or revoke",
        "group", "list, describe or reset-offsets",
        "cluster", "status or drain");
    expected.forEach((command, names) -> {
      Result r = run("", command);
      assertEquals(TalosCli.EXIT_USAGE, r.exit(), command);
      assertTrue(r.err().startsWith("Missing command: " + names + "\n"), r.err());
    });
  }

  @Test
  void shouldExplainAMissingCredentialFile() {
    Result r = run("", "topic", "list", "--endpoint", server.endpoint(), "--credential",
        dir.resolve("missing.properties").toString());
    assertEquals(TalosCli.EXIT_FAILURE, r.exit());
    assertEquals("error: credential file " + dir.resolve("missing.properties")
        + " does not exist (pass --credential FILE or set TALOS_CREDENTIAL)\n", r.err());
  }

  @Test
  void shouldExplainAnUnreachableServer() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Result r = run("", "topic", "list", "--endpoint", "http://127.0.0.1:" + port,
        "--credential", credential.toString());
    assertEquals(TalosCli.EXIT_FAILURE, r.exit());
    assertTrue(r.err().startsWith("error: cannot connect to http://127.0.0.1:" + port), r.err());
    assertTrue(r.err().contains("is the Talos server running?"), r.err());
  }

  @Test
  void shouldRejectLinesLargerThanAMessage() throws Exception {
    talos("", "topic", "create", "orders", "--partitions", "1");
    String big = "x".repeat(TalosClientConfig.PROTOCOL_MAX_MESSAGE_BYTES + 1);
    Result r = talos("ok\n" + big + "\n", "produce", "orders", "--batch", "1", "--partition", "0");
    assertEquals(TalosCli.EXIT_FAILURE, r.exit());
    assertTrue(r.err().contains("produced 1 message to orders partition 0, offsets 0..0 before the"
        + " error"), r.err());
    assertTrue(r.err().contains("error: line 2 is longer than 10485760 bytes"), r.err());
    // the same through the asynchronous producer (no --partition)
    r = talos("ok\n" + big + "\n", "produce", "orders");
    assertEquals(TalosCli.EXIT_FAILURE, r.exit());
    assertTrue(r.err().contains("produced 1 message to orders (1 partition) before the error"), r.err());
    assertTrue(r.err().contains("error: line 2 is longer than 10485760 bytes"), r.err());
  }

  @Test
  void shouldReportUsageErrorsWithExitTwo() {
    assertEquals(TalosCli.EXIT_USAGE, run("").exit());
    assertEquals(TalosCli.EXIT_USAGE, run("", "topic").exit());
    Result noPartitions = run("", "topic", "create", "orders");
    assertEquals(TalosCli.EXIT_USAGE, noPartitions.exit());
    assertTrue(noPartitions.err().contains("Missing required option: '--partitions=N'"),
        noPartitions.err());
    Result badFrom = run("", "consume", "orders", "--from", "yesterday");
    assertEquals(TalosCli.EXIT_USAGE, badFrom.exit());
    assertTrue(badFrom.err().contains("'yesterday' is not an offset >= 0, earliest, latest or timestamp:TIME"),
        badFrom.err());
    assertEquals(TalosCli.EXIT_USAGE, talos("", "produce", "orders", "--batch", "0").exit());
    assertEquals(TalosCli.EXIT_USAGE, talos("", "consume", "orders", "--max", "0").exit());
    assertEquals(TalosCli.EXIT_USAGE, talos("", "topic", "alter", "orders").exit());
    assertEquals(TalosCli.EXIT_USAGE, run("", "produce", "orders", "--compression", "lz4").exit());
  }

  @Test
  void shouldPrintHelpAndVersion() {
    Result help = run("", "--help");
    assertEquals(0, help.exit());
    assertTrue(help.out().contains("topic") && help.out().contains("consume"), help.out());
    assertEquals("talos " + ClientVersion.version() + "\n", run("", "--version").out());
    assertTrue(run("", "consume", "--help").out().contains("--print-offsets"));
  }

  @Test
  void shouldParseConsumeDefaultsAndOffsets() {
    ConsumeCommand c = parse(ConsumeCommand.class, "consume", "orders");
    assertEquals(null, c.partition, "all partitions");
    assertEquals(null, c.from, "earliest, or the group's committed offset");
    assertEquals(null, c.group);
    assertFalse(c.follow);
    assertEquals(null, c.max);
    assertEquals(1000, c.fetchSize);

    c = parse(ConsumeCommand.class, "consume", "orders", "--partition", "3", "--from", "42",
        "--follow", "--print-offsets", "--max", "7");
    assertEquals(3, c.partition);
    assertEquals(new ConsumeCommand.StartPosition(ConsumeCommand.StartPosition.Kind.OFFSET, 42),
        c.from);
    assertTrue(c.follow && c.printOffsets);
    assertEquals(7L, c.max);
    assertEquals(ConsumeCommand.StartPosition.Kind.LATEST,
        parse(ConsumeCommand.class, "consume", "t", "--from", "LATEST").from.kind());
  }

  @Test
  void shouldParseProduceAndConnectionOptions() {
    ProduceCommand p = parse(ProduceCommand.class, "produce", "orders");
    assertEquals(null, p.partition, "all partitions");
    assertEquals(5000, p.batch);
    assertEquals(null, p.keySeparator);
    assertEquals(CompressionType.NONE, p.compression);
    String endpoint = System.getenv().getOrDefault("TALOS_ENDPOINT", "http://127.0.0.1:8080");
    assertEquals(endpoint, p.options.endpoint);
    String cred = System.getenv().getOrDefault("TALOS_CREDENTIAL",
        "data/admin-credential.properties");
    assertEquals(Path.of(cred), p.options.credential);

    p = parse(ProduceCommand.class, "produce", "orders", "--batch", "5", "--compression", "GZIP",
        "--endpoint", "http://h:1", "--credential", "c.properties", "--request-timeout-ms", "99");
    assertEquals(5, p.batch);
    assertEquals(CompressionType.GZIP, p.compression);
    assertEquals("http://h:1", p.options.endpoint);
    assertEquals(99, p.options.requestTimeoutMs);
  }

  private <T> T parse(Class<T> type, String... args) {
    CommandLine cmd = new CommandLine(cli(""));
    cmd.setCaseInsensitiveEnumValuesAllowed(true);
    ParseResult result = cmd.parseArgs(args);
    while (result.subcommand() != null) result = result.subcommand();
    return type.cast(result.commandSpec().userObject());
  }

  /** Runs a command against the fake server. */
  private Result talos(String stdin, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--endpoint", server.endpoint(), "--credential", credential.toString()));
    return run(stdin, all.toArray(String[]::new));
  }

  private Result run(String stdin, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    TalosCli cli = new TalosCli(new ByteArrayInputStream(stdin.getBytes(UTF_8)),
        new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8), TalosClient::create);
    int exit = cli.execute(args);
    return new Result(exit, out.toString(UTF_8), err.toString(UTF_8));
  }

  private static TalosCli cli(String stdin) {
    return new TalosCli(new ByteArrayInputStream(stdin.getBytes(UTF_8)), System.out, System.err,
        TalosClient::create);
  }
}
