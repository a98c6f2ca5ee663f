package io.talos.client.cli;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.codec.CompressionType;
import io.talos.client.producer.PutResult;
import io.talos.client.producer.SimpleProducer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code talos produce TOPIC}: every line of stdin becomes one message (bytes as they are,
 * without the line end; empty lines are skipped). Lines go out in batches of up to
 * {@code --batch}; a smaller batch is sent as soon as stdin has nothing more to read right away,
 * so typed lines are sent when typed. A summary goes to stderr.
 */
@Command(name = "produce", mixinStandardHelpOptions = true,
    description = "Send each line of stdin as one message to a partition.")
final class ProduceCommand implements Callable<Integer> {
  @ParentCommand TalosCli cli;
  @Mixin ConnectionOptions options;
  @Spec CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TOPIC", description = "Topic name.")
  String topic;

  @Option(names = "--partition", paramLabel = "P", defaultValue = "0",
      description = "Partition to write to (default: ${DEFAULT-VALUE}).")
  int partition;

  @Option(names = "--batch", paramLabel = "N", defaultValue = "100",
      description = "Most lines per request (default: ${DEFAULT-VALUE}).")
  int batch;

  @Option(names = "--compression", paramLabel = "TYPE", defaultValue = "NONE",
      description = "NONE, SNAPPY or GZIP (default: ${DEFAULT-VALUE}).")
  CompressionType compression;

  @Override
  public Integer call() throws IOException {
    if (batch < 1) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--batch must be at least 1, got " + batch);
    }
    TalosClientConfig config = options.configBuilder().compressionType(compression).build();
    try (TalosClient client = cli.connect(config)) {
      SimpleProducer producer = client.producer(topic, partition);
      Progress progress = new Progress();
      try {
        produce(producer, new LineReader(cli.in(), config.maxMessageBytes()), progress);
      } catch (TalosException | IllegalArgumentException e) {
        if (progress.sent > 0) cli.err().println(progress.summary(topic, partition) + " before the error");
        throw e;
      }
      cli.err().println(progress.summary(topic, partition));
      return TalosCli.EXIT_OK;
    }
  }

  private void produce(SimpleProducer producer, LineReader lines, Progress progress)
      throws IOException {
    List<byte[]> pending = new ArrayList<>(batch);
    while (true) {
      if (!pending.isEmpty() && (pending.size() >= batch || !lines.ready())) {
        progress.record(producer.put(pending));
        pending = new ArrayList<>(batch);
      }
      byte[] line = lines.next();
      if (line == null) break;
      if (line.length == 0) {
        progress.skipped++;
      } else {
        pending.add(line);
      }
    }
    if (!pending.isEmpty()) progress.record(producer.put(pending));
  }

  /** What has been sent so far. */
  private static final class Progress {
    long sent;
    long skipped;
    long firstOffset = -1;
    long lastOffset = -1;

    void record(PutResult result) {
      sent += result.messageCount();
      if (result.firstOffset().isPresent()) {
        if (firstOffset < 0) firstOffset = result.firstOffset().getAsLong();
        lastOffset = result.lastOffset().getAsLong();
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
