package io.talos.client.cli;

import io.talos.client.TalosClient;
import io.talos.client.admin.TalosAdmin;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * A {@code talos} command made of subcommands ({@code topic}, {@code group}, {@code user}, ...):
 * what every such command shares. Without a subcommand it is a usage error naming them; its
 * subcommands reach the streams and the server through it. Error reporting (one line
 * {@code error: ...}, the stack trace with {@code --verbose}, exit codes) is {@link TalosCli}'s,
 * for every command alike.
 */
abstract class CommandGroup implements Runnable {
  @ParentCommand
  TalosCli cli;

  @Spec
  CommandSpec spec;

  /** Without a subcommand: "Missing command: a, b or c", in declaration order. */
  @Override
  public void run() {
    List<String> names = new ArrayList<>(spec.subcommands().keySet());
    String last = names.remove(names.size() - 1);
    throw new CommandLine.ParameterException(spec.commandLine(),
        "Missing command: " + (names.isEmpty() ? last : String.join(", ", names) + " or " + last));
  }

  /** Runs {@code action} with a client made from {@code options}, closed afterwards, and returns its result. */
  <T> T withClient(ConnectionOptions options, Function<TalosClient, T> action) {
    try (TalosClient client = cli.connect(options.configBuilder().build())) {
      return action.apply(client);
    }
  }

  /** Runs {@code action} with an admin made from {@code options} and returns its result. */
  <T> T withAdmin(ConnectionOptions options, Function<TalosAdmin, T> action) {
    return withClient(options, client -> action.apply(client.admin()));
  }

  /** Runs {@code action} with an admin made from {@code options}. */
  void runAdmin(ConnectionOptions options, Consumer<TalosAdmin> action) {
    withClient(options, client -> {
      action.accept(client.admin());
      return null;
    });
  }

  /** A table on stdout. */
  Table table(String... header) {
    return Table.tabSeparated(cli.out(), header);
  }
}
