/** The {@code talos} command line ({@link io.talos.client.cli.TalosCli}). */
package io.talos.client.cli;
