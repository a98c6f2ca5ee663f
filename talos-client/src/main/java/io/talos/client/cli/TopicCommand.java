package io.talos.client.cli;

import io.talos.client.admin.PartitionDescription;
import io.talos.client.admin.PartitionOffsets;
import io.talos.client.admin.TalosAdmin;
import io.talos.client.admin.TopicAttributeChange;
import io.talos.client.admin.TopicDescription;
import io.talos.client.admin.TopicListing;
import java.io.PrintStream;
import java.time.Instant;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code talos topic ...}: topic administration. */
@Command(name = "topic", description = "Create, list, describe, change and delete topics.",
    mixinStandardHelpOptions = true,
    subcommands = {TopicCommand.Create.class, TopicCommand.ListTopics.class,
        TopicCommand.Describe.class, TopicCommand.Alter.class, TopicCommand.Offsets.class,
        TopicCommand.Delete.class})
final class TopicCommand extends CommandGroup {

  @Command(name = "create", description = "Create a topic.", mixinStandardHelpOptions = true)
  static final class Create implements Callable<Integer> {
    @ParentCommand TopicCommand parent;
    @Mixin ConnectionOptions options;

    @Parameters(index = "0", paramLabel = "NAME", description = "Topic name.")
    String name;

    @Option(names = "--partitions", paramLabel = "N", required = true,
        description = "Number of partitions.")
    int partitions;

    @Option(names = "--retention-secs", paramLabel = "S",
        description = "How long to keep messages (default: the server's).")
    Integer retentionSecs;

    @Override
    public Integer call() {
      TopicListing topic = parent.withAdmin(options, admin -> admin.createTopic(name, partitions,
          retentionSecs == null ? OptionalInt.empty() : OptionalInt.of(retentionSecs)));
      parent.cli.out().println("created topic " + topic.name() + " with " + partitions
          + " partitions (resource name " + topic.resourceName() + ")");
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "list", description = "List topics, one name per line.",
      mixinStandardHelpOptions = true)
  static final class ListTopics implements Callable<Integer> {
    @ParentCommand TopicCommand parent;
    @Mixin ConnectionOptions options;

    @Option(names = {"-l", "--long"},
        description = "Also print resource name and owner, tab-separated.")
    boolean longFormat;

    @Override
    public Integer call() {
      PrintStream out = parent.cli.out();
      for (TopicListing t : parent.withAdmin(options, TalosAdmin::listTopics)) {
        out.println(longFormat ? t.name() + "\t" + t.resourceName() + "\t" + t.ownerId() : t.name());
      }
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "describe", description = "Show a topic's attributes and partitions.",
      mixinStandardHelpOptions = true)
  static final class Describe implements Callable<Integer> {
    @ParentCommand TopicCommand parent;
    @Mixin ConnectionOptions options;

    @Parameters(index = "0", paramLabel = "NAME", description = "Topic name.")
    String name;

    @Override
    public Integer call() {
      TopicDescription t = parent.withAdmin(options, admin -> admin.describeTopic(name));
      PrintStream out = parent.cli.out();
      out.println("name:           " + t.name());
      out.println("resource name:  " + t.resourceName());
      out.println("owner:          " + t.ownerId());
      out.println("status:         " + t.status());
      out.println("created:        " + Instant.ofEpochMilli(t.createTimestampMs()));
      out.println("partitions:     " + t.partitionCount());
      out.println("retention:      " + (t.retentionSecs().isPresent()
          ? t.retentionSecs().getAsInt() + " s" : "server default"));
      out.println("messages:       " + t.messageCount() + " (" + t.messageBytes() + " bytes)");
      t.attributes().forEach((k, v) -> out.println("attribute:      " + k + "=" + v));
      if (!t.partitions().isEmpty()) {
        Table table = Table.aligned(out, "%-10s %14s %14s %14s %16s", "PARTITION", "START", "END", "MESSAGES", "BYTES");
        for (PartitionDescription p : t.partitions()) {
          table.row(p.partitionId(), p.startOffset(), p.endOffset(), p.messageCount(), p.messageBytes());
        }
      }
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "alter", description = "Change a topic's partition count or retention.",
      mixinStandardHelpOptions = true)
  static final class Alter implements Callable<Integer> {
    @ParentCommand TopicCommand parent;
    @Mixin ConnectionOptions options;
    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "Topic name.")
    String name;

    @Option(names = "--partitions", paramLabel = "N", description = "New partition count.")
    Integer partitions;

    @Option(names = "--retention-secs", paramLabel = "S", description = "New retention.")
    Integer retentionSecs;

    @Override
    public Integer call() {
      if (partitions == null && retentionSecs == null) {
        throw Usage.error(spec, "Nothing to change: give --partitions and/or --retention-secs");
      }
      TopicAttributeChange change = new TopicAttributeChange(
          partitions == null ? OptionalInt.empty() : OptionalInt.of(partitions),
          retentionSecs == null ? OptionalInt.empty() : OptionalInt.of(retentionSecs));
      parent.runAdmin(options, admin -> admin.changeTopicAttribute(name, change));
      parent.cli.out().println("changed topic " + name);
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "offsets",
      description = "Print each partition's offset range: PARTITION START END (END inclusive).",
      mixinStandardHelpOptions = true)
  static final class Offsets implements Callable<Integer> {
    @ParentCommand TopicCommand parent;
    @Mixin ConnectionOptions options;

    @Parameters(index = "0", paramLabel = "NAME", description = "Topic name.")
    String name;

    @Override
    public Integer call() {
      PrintStream out = parent.cli.out();
      int failed = 0;
      for (PartitionOffsets p : parent.withAdmin(options, admin -> admin.getTopicOffsets(name))) {
        if (p.hasError()) {
          failed++;
          out.println(p.partitionId() + "\t" + p.errorCode() + ": " + p.errorMessage());
        } else {
          out.println(p.partitionId() + "\t" + p.startOffset() + "\t" + p.endOffset());
        }
      }
      return failed == 0 ? TalosCli.EXIT_OK : TalosCli.EXIT_FAILURE;
    }
  }

  @Command(name = "delete", description = "Delete a topic and all its messages.",
      mixinStandardHelpOptions = true)
  static final class Delete implements Callable<Integer> {
    @ParentCommand TopicCommand parent;
    @Mixin ConnectionOptions options;

    @Parameters(index = "0", paramLabel = "NAME", description = "Topic name.")
    String name;

    @Override
    public Integer call() {
      parent.runAdmin(options, admin -> admin.deleteTopic(name));
      parent.cli.out().println("deleted topic " + name);
      return TalosCli.EXIT_OK;
    }
  }
}
