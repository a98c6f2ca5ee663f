package io.talos.server.storage;

import com.sun.jna.Native;
import com.sun.jna.Platform;

/**
 * Binds the {@code native} methods of a class to the C library through JNA's direct mapping (no
 * JNI code of ours), on Linux only: the storage's system calls ({@link NativePageCache}, {@link
 * ExtentTreePin}) use Linux flags and numbers.
 */
final class LinuxLibc {
  private LinuxLibc() {}

  /** Registers {@code c}'s native methods; null when they can be called, else why not. */
  static String register(Class<?> c) {
    if (!Platform.isLinux()) return "not Linux (" + System.getProperty("os.name") + ")";
    try {
      Native.register(c, Platform.C_LIBRARY_NAME);
      return null;
    } catch (Throwable t) { // UnsatisfiedLinkError, or JNA's own library missing for this platform
      return "the C library could not be bound through JNA: " + t;
    }
  }
}
