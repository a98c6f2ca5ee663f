package io.talos.client.cli;

import io.talos.client.TalosClient;
import io.talos.client.admin.GroupPartitionState;
import io.talos.client.admin.PartitionOffsets;
import java.io.PrintStream;
import java.util.List;
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
 * {@code talos group ...}: consumer groups. A Talos consumer group exists per topic (its workers,
 * locks and offsets are kept per topic), so every subcommand names the topic.
 */
@Command(name = "group", description = "Describe consumer groups and reset their offsets.",
    mixinStandardHelpOptions = true,
    subcommands = {GroupCommand.ListGroups.class, GroupCommand.Describe.class,
        GroupCommand.ResetOffsets.class})
final class GroupCommand implements Runnable {
  @ParentCommand TalosCli cli;
  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(),
        "Missing command: list, describe or reset-offsets");
  }

  @Command(name = "list", mixinStandardHelpOptions = true,
      description = "Not available: the Talos group protocol has no call that lists groups."
          + " Exits with 1.")
  static final class ListGroups implements Callable<Integer> {
    @ParentCommand GroupCommand parent;
    @Mixin ConnectionOptions options;

    @Override
    public Integer call() {
      parent.cli.err().println("error: group list is not available: the Talos consumer-group"
          + " protocol (SDK 2.0.2) has no call that lists groups; use group describe GROUP"
          + " --topic TOPIC");
      return TalosCli.EXIT_FAILURE;
    }
  }

  @Command(name = "describe", mixinStandardHelpOptions = true,
      description = {"Show each partition of the topic for the group: the worker holding it, the"
          + " group's committed offset (the last message it finished; -1 for none), the"
          + " partition's end offset (its newest message) and the lag (messages after the"
          + " committed one).",
          "Columns are tab-separated, under a header line."})
  static final class Describe implements Callable<Integer> {
    @ParentCommand GroupCommand parent;
    @Mixin ConnectionOptions options;

    @Parameters(index = "0", paramLabel = "GROUP", description = "Consumer group name.")
    String group;

    @Option(names = "--topic", paramLabel = "TOPIC", required = true, description = "Topic name.")
    String topic;

    @Override
    public Integer call() {
      try (TalosClient client = parent.cli.connect(options.configBuilder().build())) {
        List<GroupPartitionState> state = client.consumerGroups().describe(topic, group);
        PrintStream out = parent.cli.out();
        out.println("PARTITION\tOWNER\tCOMMITTED\tEND\tLAG");
        long total = 0;
        for (GroupPartitionState s : state) {
          out.println(s.partitionId() + "\t" + (s.owner() == null ? "-" : s.owner()) + "\t"
              + s.committedOffset() + "\t" + s.endOffset() + "\t" + s.lag());
          total += s.lag();
        }
        parent.cli.err().println("group " + group + " on " + topic + ": total lag " + total);
        return TalosCli.EXIT_OK;
      }
    }
  }

  @Command(name = "reset-offsets", mixinStandardHelpOptions = true,
      description = {"Set where the group resumes: earliest (the oldest retained message), latest"
          + " (after the newest) or an offset (the next message the group reads), for every"
          + " partition or one (--partition).",
          "Refused while a live member of the group holds one of the partitions: stop the"
              + " group's consumers (and let their locks expire) first."})
  static final class ResetOffsets implements Callable<Integer> {
    @ParentCommand GroupCommand parent;
    @Mixin ConnectionOptions options;
    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "GROUP", description = "Consumer group name.")
    String group;

    @Option(names = "--topic", paramLabel = "TOPIC", required = true, description = "Topic name.")
    String topic;

    @Option(names = "--to", paramLabel = "earliest|latest|OFFSET", required = true,
        converter = ConsumeCommand.StartPosition.Converter.class,
        description = "The position to resume at.")
    ConsumeCommand.StartPosition to;

    @Option(names = "--partition", paramLabel = "P",
        description = "Only this partition (default: all).")
    Integer partition;

    @Override
    public Integer call() {
      try (TalosClient client = parent.cli.connect(options.configBuilder().build())) {
        Map<Integer, Long> committed = new TreeMap<>();
        for (PartitionOffsets o : client.admin().getTopicOffsets(topic)) {
          if (partition != null && o.partitionId() != partition) continue;
          // the group stores the last finished message: resuming at N means committing N - 1
          long resumeAt = switch (to.kind()) {
            case EARLIEST -> o.startOffset();
            case LATEST -> o.nextOffset();
            case OFFSET -> to.offset();
          };
          committed.put(o.partitionId(), resumeAt - 1);
        }
        if (partition != null && committed.isEmpty()) {
          throw new CommandLine.ParameterException(spec.commandLine(),
              "topic " + topic + " has no partition " + partition);
        }
        client.consumerGroups().resetOffsets(topic, group, committed);
        PrintStream out = parent.cli.out();
        committed.forEach((p, c) -> out.println("partition " + p + ": group " + group
            + " resumes at offset " + (c + 1)));
        return TalosCli.EXIT_OK;
      }
    }
  }
}
