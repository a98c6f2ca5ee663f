package io.talos.client.cli;

import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code talos consume TOPIC}: prints messages of one partition to stdout, one per line (the
 * payload's bytes as they are, then '\n'), optionally prefixed by the offset and a tab.
 *
 * <p>Without {@code --follow} it stops when it has caught up with the partition's end (or has
 * printed {@code --max} messages); with {@code --follow} it keeps polling for new messages until
 * interrupted (Ctrl-C), or until {@code --max} messages if that is given.
 */
@Command(name = "consume", mixinStandardHelpOptions = true,
    description = "Print the messages of a partition, one per line.")
final class ConsumeCommand implements Callable<Integer> {
  @ParentCommand TalosCli cli;
  @Mixin ConnectionOptions options;
  @Spec CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TOPIC", description = "Topic name.")
  String topic;

  @Option(names = "--partition", paramLabel = "P", defaultValue = "0",
      description = "Partition to read (default: ${DEFAULT-VALUE}).")
  int partition;

  @Option(names = "--from", paramLabel = "OFFSET|earliest|latest", defaultValue = "earliest",
      converter = StartPosition.Converter.class,
      description = "Where to start: an offset, earliest (the oldest retained message) or latest"
          + " (only messages written from now on). Default: ${DEFAULT-VALUE}.")
  StartPosition from;

  @Option(names = "--max", paramLabel = "N",
      description = "Stop after printing N messages.")
  Long max;

  @Option(names = "--follow", description = "Keep waiting for new messages until interrupted.")
  boolean follow;

  @Option(names = "--print-offsets", description = "Prefix each message with its offset and a tab.")
  boolean printOffsets;

  @Option(names = "--fetch-size", paramLabel = "N", defaultValue = "1000",
      description = "Most messages per request (default: ${DEFAULT-VALUE}).")
  int fetchSize;

  @Option(names = "--poll-interval-ms", paramLabel = "MS", defaultValue = "500",
      description = "With --follow, pause between polls that found nothing (default: ${DEFAULT-VALUE}).")
  long pollIntervalMs;

  @Override
  public Integer call() throws InterruptedException {
    if (fetchSize < 1) throw usage("--fetch-size must be at least 1, got " + fetchSize);
    if (max != null && max < 1) throw usage("--max must be at least 1, got " + max);
    if (pollIntervalMs < 1) throw usage("--poll-interval-ms must be at least 1, got " + pollIntervalMs);
    try (TalosClient client = cli.connect(options.configBuilder().build())) {
      SimpleConsumer consumer = client.consumer(topic, partition);
      long cursor = switch (from.kind()) {
        case EARLIEST -> SimpleConsumer.START_OFFSET;
        case LATEST -> client.admin().getPartitionOffset(topic, partition).nextOffset();
        case OFFSET -> from.offset();
      };
      PrintStream out = cli.out();
      long printed = 0;
      while (max == null || printed < max) {
        int want = (int) Math.min(fetchSize, max == null ? Long.MAX_VALUE : max - printed);
        List<ConsumedMessage> messages = consumer.fetch(cursor, want);
        for (ConsumedMessage m : messages) {
          if (printOffsets) out.print(m.offset() + "\t");
          out.write(m.payload(), 0, m.payload().length);
          out.write('\n');
        }
        out.flush();
        printed += messages.size();
        if (!messages.isEmpty()) {
          cursor = messages.get(messages.size() - 1).offset() + 1;
        } else if (follow) {
          Thread.sleep(pollIntervalMs);
        } else {
          break;
        }
      }
      return TalosCli.EXIT_OK;
    }
  }

  private CommandLine.ParameterException usage(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }

  /** A parsed {@code --from}. */
  record StartPosition(Kind kind, long offset) {
    enum Kind { EARLIEST, LATEST, OFFSET }

    @Override
    public String toString() {
      return kind == Kind.OFFSET ? Long.toString(offset) : kind.name().toLowerCase(Locale.ROOT);
    }

    /** Accepts {@code earliest}, {@code latest} or an offset &gt;= 0. */
    static final class Converter implements CommandLine.ITypeConverter<StartPosition> {
      @Override
      public StartPosition convert(String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        if (v.equals("earliest")) return new StartPosition(Kind.EARLIEST, -1);
        if (v.equals("latest")) return new StartPosition(Kind.LATEST, -1);
        try {
          long offset = Long.parseLong(v);
          if (offset >= 0) return new StartPosition(Kind.OFFSET, offset);
        } catch (NumberFormatException ignored) {
          // reported below
        }
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not an offset >= 0, earliest or latest");
      }
    }
  }
}
