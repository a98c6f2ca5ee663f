package io.talos.client.cli;

import io.talos.client.admin.PartitionOffsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code talos partition ...}: operator actions on one partition. */
@Command(name = "partition", description = "Operator actions on one partition.",
    mixinStandardHelpOptions = true,
    subcommands = {PartitionCommand.Reset.class})
final class PartitionCommand extends CommandGroup {

  @Command(name = "reset", mixinStandardHelpOptions = true,
      description = {"Accept that a partition's missing data is lost (the server answers HDFS_FILE_NOT_EXIST"
          + " for it): it continues at the next offset the server recorded for it, never below.",
          "A partition whose data is intact is left as it is. Needs the admin credential."})
  static final class Reset implements Callable<Integer> {
    @ParentCommand PartitionCommand parent;
    @Mixin ConnectionOptions options;

    @Parameters(index = "0", paramLabel = "TOPIC", description = "Topic name.")
    String topic;

    @Parameters(index = "1", paramLabel = "PARTITION", description = "Partition id.")
    int partition;

    @Override
    public Integer call() {
      PartitionOffsets p = parent.withAdmin(options, admin -> admin.resetPartition(topic, partition));
      parent.cli.out().println("partition " + partition + " of topic " + topic + " continues at offset "
          + p.nextOffset() + " (readable from " + p.startOffset() + ")");
      return TalosCli.EXIT_OK;
    }
  }
}
