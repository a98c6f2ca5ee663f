package io.talos.client.cli;

import io.talos.client.TalosClient;
import io.talos.client.TalosException;
import io.talos.client.admin.PartitionOffsets;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.ConsumerConfig;
import io.talos.client.consumer.ConsumerRecord;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.consumer.TalosConsumer;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code talos consume TOPIC}: prints messages to stdout, one per line (the payload's bytes as
 * they are, then '\n'), optionally prefixed by the offset (and the partition) and tabs.
 *
 * <ul>
 *   <li>{@code --partition P}: that partition only.</li>
 *   <li>neither: every partition of the topic, taking turns.</li>
 *   <li>{@code --group NAME}: as a member of consumer group NAME, the partitions the group gives
 *       this member; progress is committed for the group (every 5 s and at exit), and a later
 *       run resumes after it.</li>
 * </ul>
 *
 * <p>Without {@code --follow} it stops when it has caught up (in group mode: when nothing came
 * for {@code --idle-timeout-ms}) or has printed {@code --max} messages; with {@code --follow} it
 * keeps waiting for new messages until interrupted, and rides out a server restart (retriable
 * errors are retried). It stops quietly with exit code 0 when stdout is closed ({@code | head}).
 */
@Command(name = "consume", mixinStandardHelpOptions = true,
    description = {"Print messages, one per line: of one partition (--partition), of the whole"
        + " topic, or as a member of a consumer group (--group) that commits its progress."})
final class ConsumeCommand implements Callable<Integer> {
  @ParentCommand TalosCli cli;
  @Mixin ConnectionOptions options;
  @Spec CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TOPIC", description = "Topic name.")
  String topic;

  @Option(names = "--partition", paramLabel = "P",
      description = "Read only this partition (default: all partitions).")
  Integer partition;

  @Option(names = "--group", paramLabel = "NAME",
      description = "Consume as a member of this consumer group and commit progress; not with"
          + " --partition.")
  String group;

  @Option(names = "--from", paramLabel = "OFFSET|earliest|latest|timestamp:TIME",
      converter = StartPosition.Converter.class,
      description = "Where to start in each partition: an offset, earliest (the oldest retained"
          + " message), latest (only messages written from now on) or timestamp:TIME (the first"
          + " message appended at or after TIME: epoch ms or ISO-8601, e.g."
          + " timestamp:2026-11-23T15:00:00Z). Default: earliest; with"
          + " --group: after the group's committed offset (earliest if none).")
  StartPosition from;

  @Option(names = "--from-timestamp", paramLabel = "TIME",
      description = "Same as --from timestamp:TIME (epoch ms or an ISO-8601 instant).")
  String fromTimestamp;

  @Option(names = "--max", paramLabel = "N",
      description = "Stop after printing N messages.")
  Long max;

  @Option(names = "--follow", description = "Keep waiting for new messages until interrupted.")
  boolean follow;

  @Option(names = "--print-offsets",
      description = "Prefix each message with its offset and a tab (reading more than one"
          + " partition: its partition, a tab, its offset and a tab).")
  boolean printOffsets;

  @Option(names = "--fetch-size", paramLabel = "N", defaultValue = "1000",
      description = "Most messages per request (default: ${DEFAULT-VALUE}).")
  int fetchSize;

  @Option(names = "--poll-interval-ms", paramLabel = "MS", defaultValue = "500",
      description = "Pause between polls that found nothing (default: ${DEFAULT-VALUE}). With --group"
          + " the server holds a fetch that finds nothing until a message arrives (long poll, up to 5 s),"
          + " and this pause applies only when the server answers at once.")
  long pollIntervalMs;

  @Option(names = "--idle-timeout-ms", paramLabel = "MS", defaultValue = "2000",
      description = "With --group and without --follow: stop when nothing came for this long"
          + " (default: ${DEFAULT-VALUE}).")
  long idleTimeoutMs;

  private long printed;

  @Override
  public Integer call() throws InterruptedException {
    Usage.requireAtLeast(spec, "--fetch-size", fetchSize, 1);
    if (max != null) Usage.requireAtLeast(spec, "--max", max, 1);
    Usage.requireAtLeast(spec, "--poll-interval-ms", pollIntervalMs, 1);
    Usage.requireAtLeast(spec, "--idle-timeout-ms", idleTimeoutMs, 1);
    if (group != null && partition != null) {
      throw usage("--group gets partitions from the group; it cannot be combined with --partition");
    }
    if (group != null && (group.isEmpty() || group.length() > 256)) {
      throw usage("--group must be 1 to 256 characters");
    }
    if (fromTimestamp != null) {
      if (from != null) throw usage("--from-timestamp and --from cannot be combined");
      try {
        from = new StartPosition(StartPosition.Kind.TIMESTAMP, StartPosition.parseTime(fromTimestamp));
      } catch (CommandLine.TypeConversionException e) {
        throw usage("--from-timestamp: " + e.getMessage());
      }
    }
    io.talos.client.TalosClientConfig clientConfig = options.configBuilder().build();
    try (TalosClient client = cli.connect(clientConfig)) {
      if (group != null) return consumeAsGroupMember(client, clientConfig.requestTimeoutMs());
      List<Integer> partitions = new ArrayList<>();
      if (partition != null) {
        partitions.add(partition);
      } else {
        int count = client.admin().describeTopic(topic).partitionCount();
        for (int p = 0; p < count; p++) partitions.add(p);
      }
      return consumePartitions(client, partitions);
    }
  }

  private int consumePartitions(TalosClient client, List<Integer> partitions)
      throws InterruptedException {
    int n = partitions.size();
    SimpleConsumer[] consumers = new SimpleConsumer[n];
    long[] cursor = new long[n];
    StartPosition start = from == null ? new StartPosition(StartPosition.Kind.EARLIEST, -1) : from;
    List<PartitionOffsets> ends = start.kind() == StartPosition.Kind.LATEST && partition == null
        ? client.admin().getTopicOffsets(topic) : null;
    for (int i = 0; i < n; i++) {
      int p = partitions.get(i);
      consumers[i] = client.consumer(topic, p);
      cursor[i] = switch (start.kind()) {
        case EARLIEST -> SimpleConsumer.START_OFFSET;
        case LATEST -> ends != null ? ends.get(p).nextOffset()
            : client.admin().getPartitionOffset(topic, p).nextOffset();
        case OFFSET -> start.offset();
        case TIMESTAMP -> client.admin().offsetForTimestamp(topic, p, start.offset());
      };
    }
    boolean[] caughtUp = new boolean[n];
    int caughtUpCount = 0;
    boolean showPartition = partition == null;
    PrintStream out = cli.out();
    while (!done()) {
      boolean any = false;
      for (int i = 0; i < n && !done(); i++) {
        int want = (int) Math.min(fetchSize, max == null ? Long.MAX_VALUE : max - printed);
        List<ConsumedMessage> messages;
        try {
          messages = consumers[i].fetch(cursor[i], want);
        } catch (TalosException e) {
          if (!follow || !e.isRetriable()) throw e;
          cli.err().println("warning: " + e.getMessage() + "; retrying");
          Thread.sleep(pollIntervalMs);
          continue;
        }
        for (ConsumedMessage m : messages) print(out, showPartition, partitions.get(i), m);
        out.flush();
        if (out.checkError()) return TalosCli.EXIT_OK; // stdout closed: the reader has enough
        printed += messages.size();
        if (!messages.isEmpty()) {
          any = true;
          cursor[i] = messages.get(messages.size() - 1).offset() + 1;
        } else if (!caughtUp[i]) {
          caughtUp[i] = true;
          caughtUpCount++;
        }
      }
      if (!follow && caughtUpCount == n) break;
      if (!any && follow) Thread.sleep(pollIntervalMs);
    }
    return TalosCli.EXIT_OK;
  }

  /** Group mode commits what it printed, at most this often and at exit. */
  static final long GROUP_COMMIT_INTERVAL_MS = 5_000;

  /** Long poll of group mode: the server holds a fetch that finds nothing up to this long. */
  static final long GROUP_FETCH_MAX_WAIT_MS = 5_000;

  private int consumeAsGroupMember(TalosClient client, long requestTimeoutMs) throws InterruptedException {
    // The command commits itself, and only what it printed (a poll may return more than --max).
    // Frequent group checks: a command line is short-lived, and joins should not wait 10 s.
    ConsumerConfig.Builder config = ConsumerConfig.builder().autoCommit(false)
        .workerCheckIntervalMs(1_000).renewIntervalMs(1_000)
        .maxFetchRecords(fetchSize).maxPollBufferedRecords(Math.max(10_000, fetchSize))
        .fetchBackoffMs(Math.min(pollIntervalMs, 60_000))
        // long poll: a new message is printed as soon as it is written, not at the next poll
        // interval; the wait must end before the request's deadline (--request-timeout-ms)
        .fetchMaxWaitMs(Math.min(GROUP_FETCH_MAX_WAIT_MS, requestTimeoutMs / 2));
    if (from != null) {
      switch (from.kind()) {
        case EARLIEST -> config.startFrom(ConsumerConfig.StartFrom.EARLIEST);
        case LATEST -> config.startFrom(ConsumerConfig.StartFrom.LATEST);
        case OFFSET -> config.startOffset(from.offset());
        case TIMESTAMP -> config.startTimestampMs(from.offset());
      }
    }
    PrintStream out = cli.out();
    Map<Integer, Long> toCommit = new TreeMap<>();
    try (TalosConsumer consumer = client.consumer(topic, group, config.build())) {
      long idleSince = System.nanoTime();
      long lastCommit = System.nanoTime();
      try {
        while (!done()) {
          List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(Math.min(pollIntervalMs, idleTimeoutMs)));
          long limit = max == null ? Long.MAX_VALUE : max - printed;
          if (records.size() > limit) records = records.subList(0, (int) limit);
          for (ConsumerRecord r : records) print(out, true, r.partition(), r.message());
          out.flush();
          if (out.checkError()) return TalosCli.EXIT_OK; // stdout closed; nothing more is committed
          for (ConsumerRecord r : records) toCommit.put(r.partition(), r.offset());
          printed += records.size();
          if (System.nanoTime() - lastCommit > GROUP_COMMIT_INTERVAL_MS * 1_000_000) {
            commit(consumer, toCommit);
            lastCommit = System.nanoTime();
          }
          if (!records.isEmpty()) {
            idleSince = System.nanoTime();
          } else if (!follow && System.nanoTime() - idleSince > idleTimeoutMs * 1_000_000) {
            break;
          }
        }
      } finally {
        if (!out.checkError()) commit(consumer, toCommit);
      }
    }
    return TalosCli.EXIT_OK;
  }

  /** Commits the last printed offset of each partition still held; forgets them. */
  private void commit(TalosConsumer consumer, Map<Integer, Long> offsets) {
    List<Integer> held = consumer.assignment();
    for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
      if (!held.contains(e.getKey())) continue; // its new owner resumes from the group's commit
      try {
        consumer.commitSync(Map.of(e.getKey(), e.getValue()));
      } catch (IllegalArgumentException ignored) {
        // given up or already committed meanwhile
      }
    }
    offsets.clear();
  }

  private boolean done() {
    return max != null && printed >= max;
  }

  private void print(PrintStream out, boolean showPartition, int partition, ConsumedMessage m) {
    if (printOffsets) {
      if (showPartition) out.print(partition + "\t");
      out.print(m.offset() + "\t");
    }
    out.write(m.payload(), 0, m.payload().length);
    out.write('\n');
  }

  private CommandLine.ParameterException usage(String message) {
    return Usage.error(spec, message);
  }

  /** A parsed {@code --from}. */
  record StartPosition(Kind kind, long offset) {
    /** TIMESTAMP: {@code offset} holds the time, epoch ms. */
    enum Kind { EARLIEST, LATEST, OFFSET, TIMESTAMP }

    @Override
    public String toString() {
      return kind == Kind.OFFSET ? Long.toString(offset)
          : kind == Kind.TIMESTAMP ? "timestamp:" + offset : kind.name().toLowerCase(Locale.ROOT);
    }

    /**
     * A time given as epoch milliseconds or an ISO-8601 instant ({@code 2026-11-23T15:00:00Z}).
     *
     * @throws CommandLine.TypeConversionException when it is neither
     */
    static long parseTime(String value) {
      String v = value.strip();
      try {
        long ms = Long.parseLong(v);
        if (ms >= 0) return ms;
      } catch (NumberFormatException ignored) {
        // try ISO-8601
      }
      try {
        return java.time.Instant.parse(v).toEpochMilli();
      } catch (java.time.format.DateTimeParseException e) {
        throw new CommandLine.TypeConversionException("'" + value + "' is not a time: use epoch"
            + " milliseconds >= 0 or an ISO-8601 instant such as 2026-11-23T15:00:00Z");
      }
    }

    /** Accepts {@code earliest}, {@code latest}, an offset &gt;= 0 or {@code timestamp:TIME}. */
    static final class Converter implements CommandLine.ITypeConverter<StartPosition> {
      @Override
      public StartPosition convert(String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        if (v.equals("earliest")) return new StartPosition(Kind.EARLIEST, -1);
        if (v.equals("latest")) return new StartPosition(Kind.LATEST, -1);
        if (v.startsWith("timestamp:")) {
          return new StartPosition(Kind.TIMESTAMP, parseTime(value.strip().substring("timestamp:".length())));
        }
        try {
          long offset = Long.parseLong(v);
          if (offset >= 0) return new StartPosition(Kind.OFFSET, offset);
        } catch (NumberFormatException ignored) {
          // reported below
        }
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not an offset >= 0, earliest, latest or timestamp:TIME");
      }
    }
  }
}
