package io.talos.client.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Wrong usage found after parsing (a value out of range, options that exclude each other): picocli
 * reports it like a parse error, with the command's usage and exit code 2.
 */
final class Usage {
  private Usage() {}

  static CommandLine.ParameterException error(CommandSpec spec, String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }

  /** {@code OPTION must be at least MIN, got VALUE} unless {@code value >= min}. */
  static void requireAtLeast(CommandSpec spec, String option, long value, long min) {
    if (value < min) throw error(spec, option + " must be at least " + min + ", got " + value);
  }
}
