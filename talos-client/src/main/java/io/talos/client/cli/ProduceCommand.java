package io.talos.client.cli;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.codec.CompressionType;
import io.talos.client.producer.ProducerConfig;
import io.talos.client.producer.ProducerRecord;
import io.talos.client.producer.PutResult;
import io.talos.client.producer.SimpleProducer;
import io.talos.client.producer.TalosProducer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code talos produce TOPIC}: every line of stdin becomes one message (bytes as they are,
 * without the line end; empty lines are skipped). A summary goes to stderr.
 *
 * <p>Without {@code --partition} lines go through the asynchronous {@link TalosProducer} to all
 * partitions: round-robin, or with {@code --key-separator} by the hash of the key before the
 * separator (the rest of the line is the message). With {@code --partition} they go to that
 * partition in synchronous batches of up to {@code --batch} (a smaller batch is sent as soon as
 * stdin has nothing more to read right away, so typed lines are sent when typed), and the
 * summary names the offsets.
 *
 * <p>Progress (lines, lines/s) is shown on stderr once producing has taken more than a second,
 * unless {@code --no-progress}.
 */
@Command(name = "produce", mixinStandardHelpOptions = true,
    description = {"Send each line of stdin as one message: to all partitions of the topic"
        + " (round-robin, or by key with --key-separator), or to one with --partition.",
        "Progress is shown on stderr for input that takes more than a second."})
final class ProduceCommand implements Callable<Integer> {
  /** Progress is shown once producing has run this long. */
  static final long PROGRESS_AFTER_MS = 1_000;
  /** A request's lines end at this many bytes (the async producer's batch.max.bytes default). */
  static final int BATCH_MAX_BYTES = 1024 * 1024;

  @ParentCommand TalosCli cli;
  @Mixin ConnectionOptions options;
  @Spec CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TOPIC", description = "Topic name.")
  String topic;

  @Option(names = "--partition", paramLabel = "P",
      description = "Write every line to this partition, synchronously, and report the offsets"
          + " (default: spread over all partitions).")
  Integer partition;

  @Option(names = "--key-separator", paramLabel = "SEP",
      description = "Each line is KEY SEP VALUE: the key (not stored) chooses the partition by its"
          + " murmur2 hash, the value is the message; a line without SEP is an error. Not with"
          + " --partition.")
  String keySeparator;

  @Option(names = "--batch", paramLabel = "N", defaultValue = "5000",
      description = "Most lines per request; a request also ends at 1 MiB of lines"
          + " (default: ${DEFAULT-VALUE}).")
  int batch;

  @Option(names = "--linger-ms", paramLabel = "MS", defaultValue = "5",
      description = "Without --partition: how long a partition's batch waits for more lines"
          + " (default: ${DEFAULT-VALUE}).")
  long lingerMs;

  @Option(names = "--compression", paramLabel = "TYPE", defaultValue = "NONE",
      description = "NONE, SNAPPY or GZIP (default: ${DEFAULT-VALUE}).")
  CompressionType compression;

  @Option(names = "--no-progress", description = "Do not show progress on stderr.")
  boolean noProgress;

  /** When progress appears; hidden, for tests. */
  @Option(names = "--progress-after-ms", hidden = true, defaultValue = "" + PROGRESS_AFTER_MS)
  long progressAfterMs;

  @Override
  public Integer call() throws IOException, InterruptedException {
    Usage.requireAtLeast(spec, "--batch", batch, 1);
    Usage.requireAtLeast(spec, "--linger-ms", lingerMs, 0);
    if (keySeparator != null && keySeparator.isEmpty()) throw usage("--key-separator must not be empty");
    if (keySeparator != null && partition != null) {
      throw usage("--key-separator chooses partitions by key; it cannot be combined with --partition");
    }
    TalosClientConfig config = options.configBuilder().compressionType(compression).build();
    try (TalosClient client = cli.connect(config);
         Progress progress = new Progress(noProgress ? null : cli.err(), progressAfterMs)) {
      LineReader lines = new LineReader(cli.in(), config.maxMessageBytes());
      if (partition == null) return produceToTopic(client, lines, progress);
      SimpleProducer producer = client.producer(topic, partition);
      try {
        produce(producer, lines, progress);
      } catch (TalosException | IllegalArgumentException e) {
        progress.close();
        if (progress.sent > 0) cli.err().println(progress.summary(topic, partition) + " before the error");
        throw e;
      }
      progress.close();
      cli.err().println(progress.summary(topic, partition));
      return TalosCli.EXIT_OK;
    }
  }

  private CommandLine.ParameterException usage(String message) {
    return Usage.error(spec, message);
  }

  private int produceToTopic(TalosClient client, LineReader lines, Progress progress)
      throws IOException, InterruptedException {
    ProducerConfig producerConfig = ProducerConfig.builder()
        .batchMaxRecords(batch).batchMaxBytes(BATCH_MAX_BYTES).lingerMs(lingerMs).compressionType(compression)
        .partitioner(keySeparator == null ? ProducerConfig.PARTITIONER_ROUND_ROBIN
            : ProducerConfig.PARTITIONER_KEY_HASH)
        .build();
    byte[] separator = keySeparator == null ? null : keySeparator.getBytes(StandardCharsets.UTF_8);
    AtomicLong stored = new AtomicLong();
    AtomicReference<Exception> failure = new AtomicReference<>();
    int partitions;
    try (TalosProducer producer = client.producer(topic, producerConfig)) {
      partitions = client.admin().describeTopic(topic).partitionCount();
      long lineNumber = 0;
      try {
        byte[] line;
        while (failure.get() == null && (line = lines.next()) != null) {
          lineNumber++;
          if (line.length == 0) {
            progress.skipped++;
            continue;
          }
          ProducerRecord record;
          if (separator == null) {
            record = ProducerRecord.of(line);
          } else {
            int at = indexOf(line, separator);
            if (at < 0) {
              throw new IllegalArgumentException("line " + lineNumber + " has no key separator '"
                  + keySeparator + "' (with --key-separator every line is KEY" + keySeparator + "VALUE)");
            }
            byte[] value = java.util.Arrays.copyOfRange(line, at + separator.length, line.length);
            if (value.length == 0) {
              progress.skipped++;
              continue;
            }
            record = ProducerRecord.of(new String(line, 0, at, StandardCharsets.UTF_8), value);
          }
          producer.send(record, (metadata, error) -> {
            if (error != null) {
              failure.compareAndSet(null, error);
            } else {
              stored.incrementAndGet();
            }
          });
          progress.add(1);
        }
        producer.flush();
      } catch (TalosException | IllegalArgumentException e) {
        failure.compareAndSet(null, e);
        producer.flush();
      }
    }
    progress.close();
    String summary = "produced " + stored.get() + (stored.get() == 1 ? " message" : " messages")
        + " to " + topic + " (" + partitions + (partitions == 1 ? " partition" : " partitions") + ")"
        + (progress.skipped > 0 ? ", skipped " + progress.skipped + " empty lines" : "");
    Exception e = failure.get();
    if (e != null) {
      cli.err().println(summary + " before the error");
      if (e instanceof RuntimeException r) throw r;
      throw new IllegalStateException(e);
    }
    cli.err().println(summary);
    return TalosCli.EXIT_OK;
  }

  private static int indexOf(byte[] line, byte[] separator) {
    outer:
    for (int i = 0; i + separator.length <= line.length; i++) {
      for (int j = 0; j < separator.length; j++) {
        if (line[i + j] != separator[j]) continue outer;
      }
      return i;
    }
    return -1;
  }

  private void produce(SimpleProducer producer, LineReader lines, Progress progress)
      throws IOException {
    List<byte[]> pending = new ArrayList<>(Math.min(batch, 10_000));
    long pendingBytes = 0;
    while (true) {
      if (!pending.isEmpty() && (pending.size() >= batch || pendingBytes >= BATCH_MAX_BYTES
          || !lines.ready())) {
        progress.record(producer.put(pending));
        pending = new ArrayList<>(Math.min(batch, 10_000));
        pendingBytes = 0;
      }
      byte[] line = lines.next();
      if (line == null) break;
      if (line.length == 0) {
        progress.skipped++;
      } else {
        pending.add(line);
        pendingBytes += line.length;
      }
    }
    if (!pending.isEmpty()) progress.record(producer.put(pending));
  }

  /** What has been sent so far, and the progress display once input takes long. */
  private static final class Progress implements AutoCloseable {
    private final java.io.PrintStream display;
    private final long afterMs;
    private final long startNanos = System.nanoTime();
    private ProgressBar bar;
    private long counted;
    long sent;
    long skipped;
    long firstOffset = -1;
    long lastOffset = -1;

    /** @param display where progress goes, or null for none */
    Progress(java.io.PrintStream display, long afterMs) {
      this.display = display;
      this.afterMs = afterMs;
    }

    void record(PutResult result) {
      sent += result.messageCount();
      add(result.messageCount());
      if (result.firstOffset().isPresent()) {
        if (firstOffset < 0) firstOffset = result.firstOffset().getAsLong();
        lastOffset = result.lastOffset().getAsLong();
      }
    }

    /** Counts lines handed on; shows the bar once producing has run PROGRESS_AFTER_MS. */
    void add(long n) {
      counted += n;
      if (display == null) return;
      if (bar == null) {
        if (afterMs > 0 && (counted & 1023) != 0 && n == 1) return; // look at the clock now and then
        if (System.nanoTime() - startNanos < afterMs * 1_000_000) return;
        bar = new ProgressBarBuilder().setTaskName("produce").setInitialMax(-1).setUnit(" lines", 1)
            .showSpeed().setUpdateIntervalMillis(500)
            .setConsumer(new ConsoleProgressBarConsumer(display, 100))
            .startsFrom(0, java.time.Duration.ofNanos(System.nanoTime() - startNanos))
            .build();
        bar.stepTo(counted);
        return;
      }
      bar.stepTo(counted);
    }

    @Override
    public void close() {
      if (bar != null) {
        bar.close();
        bar = null;
      }
    }

    String summary(String topic, int partition) {
      StringBuilder sb = new StringBuilder("produced ").append(sent)
          .append(sent == 1 ? " message" : " messages").append(" to ").append(topic)
          .append(" partition ").append(partition);
      if (firstOffset >= 0) sb.append(", offsets ").append(firstOffset).append("..").append(lastOffset);
      if (skipped > 0) sb.append(", skipped ").append(skipped).append(" empty lines");
      return sb.toString();
    }
  }
}
