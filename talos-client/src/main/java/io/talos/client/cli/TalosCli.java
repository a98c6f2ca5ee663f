package io.talos.client.cli;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.internals.ClientVersion;
import io.talos.common.config.ConfigException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * The {@code talos} command line: topic administration, producing lines from stdin and
 * consuming messages to stdout.
 *
 * <pre>
 *   talos topic create orders --partitions 4
 *   seq 1 1000 | talos produce orders --partition 0
 *   talos consume orders --partition 0 --from earliest --print-offsets
 *   talos consume orders --group billing --follow
 *   talos group describe billing --topic orders
 * </pre>
 *
 * <p>Errors are printed as one line {@code error: <code or HTTP status>: <message>} on stderr
 * (with the stack trace under {@code --verbose}). Exit codes: 0 success, 1 the operation failed,
 * 2 wrong usage.
 *
 * <p>An instance serves one command line; not thread-safe.
 */
@Command(name = "talos", mixinStandardHelpOptions = true,
    versionProvider = TalosCli.Version.class,
    description = "Talos command-line client.",
    subcommands = {TopicCommand.class, PartitionCommand.class, ProduceCommand.class, ConsumeCommand.class,
        UserCommand.class, GroupCommand.class, AclCommand.class, ClusterCommand.class},
    footer = {"", "Exit codes: 0 success, 1 the operation failed, 2 wrong usage."})
public final class TalosCli implements Runnable {
  public static final int EXIT_OK = 0;
  public static final int EXIT_FAILURE = 1;
  public static final int EXIT_USAGE = 2;

  @Spec
  CommandSpec spec;

  private final InputStream in;
  private final PrintStream out;
  private final PrintStream err;
  private final Function<TalosClientConfig, TalosClient> clientFactory;

  /**
   * @param clientFactory makes the client for a command from its configuration
   */
  public TalosCli(InputStream in, PrintStream out, PrintStream err,
      Function<TalosClientConfig, TalosClient> clientFactory) {
    this.in = in;
    this.out = out;
    this.err = err;
    this.clientFactory = clientFactory;
  }

  public static void main(String[] args) {
    // the CLI ships no SLF4J binding: keep SLF4J's "no providers" notice off stderr
    if (System.getProperty("slf4j.internal.verbosity") == null) {
      System.setProperty("slf4j.internal.verbosity", "ERROR");
    }
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    PrintStream err = new PrintStream(System.err, true, StandardCharsets.UTF_8);
    int code = new TalosCli(System.in, out, err, TalosClient::create).execute(args);
    out.flush();
    System.exit(code);
  }

  /** Runs one command line and returns its exit code; never throws. */
  public int execute(String... args) {
    CommandLine cmd = new CommandLine(this);
    cmd.setOut(new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), true));
    cmd.setErr(new PrintWriter(new OutputStreamWriter(err, StandardCharsets.UTF_8), true));
    cmd.setExecutionExceptionHandler(this::handleFailure);
    cmd.setCaseInsensitiveEnumValuesAllowed(true);
    try {
      return cmd.execute(args);
    } finally {
      out.flush();
      err.flush();
    }
  }

  /** Without a subcommand: say what is missing. */
  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(),
        "Missing command: topic, partition, produce, consume, group, user or acl");
  }

  InputStream in() {
    return in;
  }

  PrintStream out() {
    return out;
  }

  PrintStream err() {
    return err;
  }

  TalosClient connect(TalosClientConfig config) {
    return clientFactory.apply(config);
  }

  private int handleFailure(Exception e, CommandLine cmd, ParseResult parseResult) {
    err.println("error: " + describe(e));
    if (isVerbose(parseResult)) e.printStackTrace(err);
    err.flush();
    return EXIT_FAILURE;
  }

  static String describe(Exception e) {
    if (e instanceof TalosException t) {
      if (t.errorCode() == null && t.httpStatus() == 0 && t.getCause() instanceof ConnectException) {
        return t.getMessage() + " (is the Talos server running? set --endpoint or TALOS_ENDPOINT)";
      }
      return t.getMessage();
    }
    if (e instanceof ConfigException) {
      String message = e.getMessage();
      return message.startsWith("credential file") || message.startsWith("cannot read credential")
          ? message + " (pass --credential FILE or set TALOS_CREDENTIAL)" : message;
    }
    if (e instanceof IllegalArgumentException || e instanceof IllegalStateException) {
      return e.getMessage();
    }
    return e.toString();
  }

  private static boolean isVerbose(ParseResult result) {
    for (ParseResult r = result; r != null; r = r.subcommand()) {
      if (r.hasMatchedOption("--verbose")) return true;
    }
    return false;
  }

  /** Reports the client version. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"talos " + ClientVersion.version()};
    }
  }
}
