package io.talos.client.cli;

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
final class GroupCommand extends CommandGroup {

  @Command(name = "list", mixinStandardHelpOptions = true,
      description = {"List consumer groups: one line per topic and group, tab-separated under a"
          + " header line, sorted by topic then group. A group is listed while the server holds"
          + " state for it (a registered worker, a partition lock or a committed offset).",
          "Uses a Talos server extension (listConsumerGroups); servers of the original protocol"
              + " do not have it."})
  static final class ListGroups implements Callable<Integer> {
    @ParentCommand GroupCommand parent;
    @Mixin ConnectionOptions options;

    @Option(names = "--topic", paramLabel = "TOPIC", description = "Only this topic's groups (default: all topics).")
    String topic;

    @Override
    public Integer call() {
      return parent.withClient(options, client -> {
        Table table = parent.table("TOPIC", "GROUP");
        for (io.talos.client.admin.ConsumerGroupAdmin.GroupListing g : client.consumerGroups().list(topic)) {
          table.row(g.topicName(), g.group());
        }
        return TalosCli.EXIT_OK;
      });
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
      List<GroupPartitionState> state = parent.withClient(options, client -> client.consumerGroups().describe(topic, group));
      Table table = parent.table("PARTITION", "OWNER", "COMMITTED", "END", "LAG");
      long total = 0;
      for (GroupPartitionState s : state) {
        table.row(s.partitionId(), s.owner() == null ? "-" : s.owner(), s.committedOffset(), s.endOffset(), s.lag());
        total += s.lag();
      }
      parent.cli.err().println("group " + group + " on " + topic + ": total lag " + total);
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "reset-offsets", mixinStandardHelpOptions = true,
      description = {"Set where the group resumes: earliest (the oldest retained message), latest"
          + " (after the newest), an offset (the next message the group reads) or timestamp:TIME"
          + " (the first message appended at or after TIME, epoch ms or ISO-8601), for every"
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

    @Option(names = "--to", paramLabel = "earliest|latest|OFFSET|timestamp:TIME", required = true,
        converter = ConsumeCommand.StartPosition.Converter.class,
        description = "The position to resume at.")
    ConsumeCommand.StartPosition to;

    @Option(names = "--partition", paramLabel = "P",
        description = "Only this partition (default: all).")
    Integer partition;

    @Override
    public Integer call() {
      return parent.withClient(options, client -> {
        Map<Integer, Long> committed = new TreeMap<>();
        for (PartitionOffsets o : client.admin().getTopicOffsets(topic)) {
          if (partition != null && o.partitionId() != partition) continue;
          // the group stores the last finished message: resuming at N means committing N - 1
          long resumeAt = switch (to.kind()) {
            case EARLIEST -> o.startOffset();
            case LATEST -> o.nextOffset();
            case OFFSET -> to.offset();
            case TIMESTAMP -> client.admin().offsetForTimestamp(topic, o.partitionId(), to.offset());
          };
          committed.put(o.partitionId(), resumeAt - 1);
        }
        if (partition != null && committed.isEmpty()) {
          throw Usage.error(spec, "topic " + topic + " has no partition " + partition);
        }
        client.consumerGroups().resetOffsets(topic, group, committed);
        PrintStream out = parent.cli.out();
        committed.forEach((p, c) -> out.println("partition " + p + ": group " + group
            + " resumes at offset " + (c + 1)));
        return TalosCli.EXIT_OK;
      });
    }
  }
}
