package io.talos.server.auth;

import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataStore;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Properties;

/**
 * The admin credential of a standalone node: created on first start, stored in the metadata store
 * and written to a properties file (keys {@code secretKeyId}, {@code secretKey}; mode 0600) that
 * the CLI and SDK read.
 */
public final class AdminCredentials {
  public static final String ADMIN_OWNER = "admin";
  public static final String KEY_ID_PROPERTY = "secretKeyId";
  public static final String KEY_PROPERTY = "secretKey";

  private AdminCredentials() {}

  /**
   * Returns the admin credential named in {@code file} if it is in the store; otherwise creates a
   * new one, stores it, and writes the file.
   *
   * @return the credential and whether it was created now
   */
  public static Result ensure(MetadataStore store, Path file) throws IOException {
    if (Files.exists(file)) {
      Properties p = new Properties();
      try (var in = Files.newInputStream(file)) {
        p.load(in);
      }
      String keyId = p.getProperty(KEY_ID_PROPERTY);
      Optional<Credential> stored = keyId == null ? Optional.empty() : store.credential(keyId);
      if (stored.isPresent()) return new Result(stored.get(), false);
    }
    Credential credential = new Credential(Secrets.newKeyId(), Secrets.newSecret(), ADMIN_OWNER, true);
    if (!store.putCredentialIfAbsent(credential)) {
      throw new IllegalStateException("credential id collision for " + credential.secretKeyId());
    }
    write(file, credential);
    return new Result(credential, true);
  }

  private static void write(Path file, Credential credential) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    try {
      Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) {
      Files.createFile(tmp);
    }
    Properties p = new Properties();
    p.setProperty(KEY_ID_PROPERTY, credential.secretKeyId());
    p.setProperty(KEY_PROPERTY, credential.secretKey());
    try (OutputStream out = Files.newOutputStream(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      p.store(out, "Talos admin credential: keep secret");
    }
    Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  public record Result(Credential credential, boolean created) {}
}
