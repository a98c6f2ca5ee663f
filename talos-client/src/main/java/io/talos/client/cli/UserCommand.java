package io.talos.client.cli;

import io.talos.client.TalosClientConfig;
import io.talos.client.admin.CredentialListing;
import io.talos.client.admin.IssuedCredential;
import io.talos.client.admin.TalosAdmin;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code talos user ...}: accounts and their credentials (admin credential only).
 *
 * <p>A new secret (create, rotate) is shown once: written with {@code --out FILE} (mode 0600, in
 * the admin credential file's format, {@code secretKeyId} and {@code secretKey}, plus {@code
 * accountId}), else printed. The file must not exist yet: it is checked before the server is
 * asked, so a secret is never lost to a refused write.
 */
@Command(name = "user", description = "Accounts and their credentials (needs the admin credential).",
    mixinStandardHelpOptions = true,
    subcommands = {UserCommand.Create.class, UserCommand.ListCredentials.class, UserCommand.Rotate.class,
        UserCommand.Revoke.class})
final class UserCommand extends CommandGroup {
  static final String ACCOUNT_ID_PROPERTY = "accountId";


  @Command(name = "create", mixinStandardHelpOptions = true,
      description = {"Create a credential for account NAME (which has no active one).",
          "NAME owns the topics the credential creates and is the identifier a Grantee of type DEVELOPER names."})
  static final class Create implements Callable<Integer> {
    @ParentCommand UserCommand parent;
    @Mixin ConnectionOptions options;

    @Parameters(index = "0", paramLabel = "NAME", description = "Account id: 1..64 characters of A-Z a-z 0-9 . _ -")
    String name;

    @Option(names = "--out", paramLabel = "FILE", description = "Write the credential here (mode 0600) instead of printing the secret.")
    Path out;

    @Override
    public Integer call() {
      checkAbsent(out);
      IssuedCredential c = parent.withAdmin(options, admin -> admin.createCredential(name));
      parent.issued("created", c, out);
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "List every credential (never a secret).")
  static final class ListCredentials implements Callable<Integer> {
    @ParentCommand UserCommand parent;
    @Mixin ConnectionOptions options;

    @Override
    public Integer call() {
      List<CredentialListing> all = parent.withAdmin(options, TalosAdmin::listCredentials);
      Table table = Table.aligned(parent.cli.out(), "%-20s %-24s %-8s %s", "KEY ID", "ACCOUNT", "STATE", "DETAILS");
      for (CredentialListing c : all) {
        String state = c.revoked() ? "revoked" : c.admin() ? "admin" : "active";
        StringBuilder details = new StringBuilder();
        if (c.createdMs() != 0) details.append("created ").append(Instant.ofEpochMilli(c.createdMs())).append(' ');
        if (c.rotatedMs() != 0) details.append("rotated ").append(Instant.ofEpochMilli(c.rotatedMs())).append(' ');
        if (c.previousSecretExpiresMs() != 0) {
          details.append("old secret valid until ").append(Instant.ofEpochMilli(c.previousSecretExpiresMs())).append(' ');
        }
        if (c.revoked()) details.append("revoked ").append(Instant.ofEpochMilli(c.revokedMs()));
        table.row(c.secretKeyId(), c.accountId(), state, details.toString().trim());
      }
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "rotate", mixinStandardHelpOptions = true,
      description = {"Give a credential a new secret; the current one stays valid for the grace period,"
          + " so clients can switch one by one."})
  static final class Rotate implements Callable<Integer> {
    @ParentCommand UserCommand parent;
    @Mixin ConnectionOptions options;

    @Parameters(index = "0", paramLabel = "KEYID|NAME", description = "Key id, or the account of one active credential.")
    String target;

    @Option(names = "--grace-ms", paramLabel = "MS",
        description = "How long the current secret stays valid (default: the server's auth.credential.rotation.grace.ms).")
    Long graceMs;

    @Option(names = "--out", paramLabel = "FILE", description = "Write the credential here (mode 0600) instead of printing the secret.")
    Path out;

    @Override
    public Integer call() {
      checkAbsent(out);
      IssuedCredential c = parent.withAdmin(options, admin -> admin.rotateCredential(resolve(admin, target),
          graceMs == null ? OptionalLong.empty() : OptionalLong.of(graceMs)));
      parent.issued("rotated", c, out);
      if (c.credential().previousSecretExpiresMs() != 0) {
        parent.cli.out().println("the previous secret is accepted until "
            + Instant.ofEpochMilli(c.credential().previousSecretExpiresMs()));
      }
      return TalosCli.EXIT_OK;
    }
  }

  @Command(name = "revoke", mixinStandardHelpOptions = true,
      description = {"Revoke a credential for good: every node refuses it within metadata.cache.ttl.ms.",
          "The account and its topics stay; create a new credential for it if needed."})
  static final class Revoke implements Callable<Integer> {
    @ParentCommand UserCommand parent;
    @Mixin ConnectionOptions options;

    @Parameters(index = "0", paramLabel = "KEYID|NAME", description = "Key id, or the account of one active credential.")
    String target;

    @Override
    public Integer call() {
      CredentialListing c = parent.withAdmin(options, admin -> admin.revokeCredential(resolve(admin, target)));
      parent.cli.out().println("revoked " + c.secretKeyId() + " (account " + c.accountId() + ")");
      return TalosCli.EXIT_OK;
    }
  }

  /** A key id as given, or the key id of the one active credential of account {@code target}. */
  static String resolve(TalosAdmin admin, String target) {
    List<CredentialListing> all = admin.listCredentials();
    for (CredentialListing c : all) {
      if (c.secretKeyId().equals(target)) return target;
    }
    List<CredentialListing> active = all.stream().filter(c -> c.accountId().equals(target) && !c.revoked()).toList();
    if (active.size() == 1) return active.get(0).secretKeyId();
    if (active.isEmpty()) throw new IllegalArgumentException("no credential has key id '" + target
        + "' and account '" + target + "' has no active credential");
    throw new IllegalArgumentException("account '" + target + "' has " + active.size()
        + " active credentials; name one by its key id");
  }

  private static void checkAbsent(Path out) {
    if (out != null && Files.exists(out)) {
      throw new IllegalArgumentException(out + " exists; choose a new file (the secret is written once)");
    }
  }

  private void issued(String what, IssuedCredential c, Path out) {
    CredentialListing l = c.credential();
    if (out == null) {
      cli.out().println(what + " " + l.secretKeyId() + " for account " + l.accountId());
      cli.out().println(TalosClientConfig.SECRET_KEY_ID + "=" + l.secretKeyId());
      cli.out().println("secretKey=" + c.secretKey());
      cli.out().println(ACCOUNT_ID_PROPERTY + "=" + l.accountId());
      cli.out().println("(the secret is shown once; keep it)");
      return;
    }
    write(out, l, c.secretKey());
    cli.out().println(what + " " + l.secretKeyId() + " for account " + l.accountId() + "; written to " + out);
  }

  /** Writes the credential file owner-only, atomically: a temporary file moved into place. */
  static void write(Path file, CredentialListing l, String secretKey) {
    try {
      Path dir = file.toAbsolutePath().getParent();
      Files.createDirectories(dir);
      Path tmp = dir.resolve(file.getFileName() + ".tmp");
      Files.deleteIfExists(tmp);
      try {
        Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      } catch (UnsupportedOperationException e) {
        Files.createFile(tmp);
      }
      Properties p = new Properties();
      p.setProperty(TalosClientConfig.SECRET_KEY_ID, l.secretKeyId());
      p.setProperty("secretKey", secretKey);
      p.setProperty(ACCOUNT_ID_PROPERTY, l.accountId());
      try (OutputStream o = Files.newOutputStream(tmp)) {
        p.store(o, "Talos credential of account " + l.accountId() + ": keep secret");
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
