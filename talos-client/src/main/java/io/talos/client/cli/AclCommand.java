package io.talos.client.cli;

import io.talos.client.TalosClient;
import io.talos.thrift.Permission;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code talos acl ...}: who may do what on a topic. Levels are the SDK's {@code Permission}
 * names; setting and revoking needs CHANGE_PERMISSION on the topic (its owner and the admin have
 * it), listing needs DESCRIBE_TOPIC.
 */
@Command(name = "acl", description = "Topic permissions: grant, revoke and list (SDK Permission levels).",
    mixinStandardHelpOptions = true,
    subcommands = {AclCommand.Set.class, AclCommand.Revoke.class, AclCommand.ListAcl.class})
final class AclCommand implements Runnable {
  @ParentCommand
  TalosCli cli;

  @Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing command: set, revoke or list");
  }

  @Command(name = "set", mixinStandardHelpOptions = true,
      description = "Grant ACCOUNT the permission LEVEL on TOPIC (replaces its previous grant).")
  static final class Set implements Callable<Integer> {
    @ParentCommand AclCommand parent;
    @Mixin ConnectionOptions options;
    @Parameters(index = "0", paramLabel = "TOPIC") String topic;
    @Parameters(index = "1", paramLabel = "ACCOUNT") String account;
    @Parameters(index = "2", paramLabel = "LEVEL", description = "One of PUT_MESSAGE, GET_MESSAGE, FULL_MESSAGE_CONTROL,"
        + " DESCRIBE_TOPIC, PUT_MESSAGE_AND_DESCRIBE_TOPIC, GET_MESSAGE_AND_DESCRIBE_TOPIC,"
        + " TOPIC_READ_AND_MESSAGE_FULL_CONTROL, CHANGE_TOPIC, FULL_TOPIC_CONTROL, FULL_CONTROL, CHANGE_PERMISSION, ADMIN")
    String level;

    @Override
    public Integer call() {
      Permission p;
      try {
        p = Permission.valueOf(level.toUpperCase(java.util.Locale.ROOT));
      } catch (IllegalArgumentException e) {
        p = null;
      }
      if (p == null || p == Permission.NONE) {
        throw new CommandLine.ParameterException(parent.spec.commandLine(), "unknown permission level '" + level
            + "'; one of " + Arrays.toString(Arrays.copyOfRange(Permission.values(), 1, Permission.values().length))
            + " (to remove a grant: acl revoke)");
      }
      try (TalosClient client = parent.cli.connect(options.configBuilder().build())) {
        client.admin().setPermission(topic, account, p);
      }
      parent.cli.out().printf("granted %s on %s to %s%n", p, topic, account);
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Take ACCOUNT's grant on TOPIC away.")
  static final class Revoke implements Callable<Integer> {
    @ParentCommand AclCommand parent;
    @Mixin ConnectionOptions options;
    @Parameters(index = "0", paramLabel = "TOPIC") String topic;
    @Parameters(index = "1", paramLabel = "ACCOUNT") String account;

    @Override
    public Integer call() {
      try (TalosClient client = parent.cli.connect(options.configBuilder().build())) {
        client.admin().revokePermission(topic, account);
      }
      parent.cli.out().printf("revoked the grant of %s on %s%n", account, topic);
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "List who holds which permission on TOPIC.")
  static final class ListAcl implements Callable<Integer> {
    @ParentCommand AclCommand parent;
    @Mixin ConnectionOptions options;
    @Parameters(index = "0", paramLabel = "TOPIC") String topic;

    @Override
    public Integer call() {
      Map<String, Integer> acl;
      try (TalosClient client = parent.cli.connect(options.configBuilder().build())) {
        acl = client.admin().listPermissions(topic);
      }
      parent.cli.out().printf("%-24s %s%n", "ACCOUNT", "PERMISSION");
      acl.forEach((account, value) -> {
        Permission p = Permission.findByValue(value);
        parent.cli.out().printf("%-24s %s%n", account, p == null ? Integer.toString(value) : p.name());
      });
      return TalosCli.EXIT_OK;
    }
  }
}
