package io.talos.client.cli;

import io.talos.thrift.Permission;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code talos acl ...}: who may do what on a topic. Levels are the SDK's {@code Permission}
 * names; setting and revoking needs CHANGE_PERMISSION on the topic (its owner and the admin have
 * it), listing needs DESCRIBE_TOPIC.
 */
@Command(name = "acl", description = "Topic permissions: grant, revoke and list (SDK Permission levels).",
    mixinStandardHelpOptions = true,
    subcommands = {AclCommand.Set.class, AclCommand.Revoke.class, AclCommand.ListAcl.class})
final class AclCommand extends CommandGroup {

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
        throw Usage.error(parent.spec, "unknown permission level '" + level
            + "'; one of " + Arrays.toString(Arrays.copyOfRange(Permission.values(), 1, Permission.values().length))
            + " (to remove a grant: acl revoke)");
      }
      Permission level = p;
      parent.runAdmin(options, admin -> admin.setPermission(topic, account, level));
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
      parent.runAdmin(options, admin -> admin.revokePermission(topic, account));
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
      Map<String, Integer> acl = parent.withAdmin(options, admin -> admin.listPermissions(topic));
      Table table = Table.aligned(parent.cli.out(), "%-24s %s", "ACCOUNT", "PERMISSION");
      acl.forEach((account, value) -> {
        Permission p = Permission.findByValue(value);
        table.row(account, p == null ? Integer.toString(value) : p.name());
      });
      return TalosCli.EXIT_OK;
    }
  }
}
