package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class LoadBenchTest {
  @Test
  void shouldParseScenarioOptionsAndServerKeys() {
    LoadBench.All all = new LoadBench.All();
    new CommandLine(all).parseArgs("--partitions", "1,8,128", "--batches", "1,10", "--rate", "500",
        "--latency-long-poll-ms", "0",
        "--no-kafka", "--durability", "sync", "-Dscheduling.workers=4", "--out", "/tmp/x");
    assertEquals(List.of(1, 8, 128), all.sync.partitions);
    assertEquals(List.of(1, 10), all.sync.batches);
    assertEquals(500, all.latency.rate);
    assertEquals(0, all.latency.longPollMs, "busy poll asked for");
    assertTrue(all.common.noKafka);
    assertEquals("sync", all.common.durability);
    assertEquals(Map.of("scheduling.workers", "4"), all.common.talosProps);
    assertEquals(Path.of("/tmp/x"), all.common.out);
  }

  @Test
  void shouldTakeAGeneratorSliceTheKernelAcceptsOnly() {
    LoadBench.All all = new LoadBench.All();
    new CommandLine(all).parseArgs("--generator-slice-us", "100");
    assertEquals(100, all.latency.generatorSliceUs);
    assertEquals(0, new LoadBench.LatencyOptions().generatorSliceUs, "the kernel's default unless asked");
    for (String bad : new String[] {"99", "100001", "-1"}) {
      LoadBench.All a = new LoadBench.All();
      new CommandLine(a).parseArgs("--generator-slice-us", bad);
      // refused before any server is started (no context needed)
      CommandLine.ParameterException e = assertThrows(CommandLine.ParameterException.class,
          () -> LoadBench.runLatency(null, a.latency));
      assertEquals("--generator-slice-us must be 0 or between 100 and 100000, got " + bad, e.getMessage());
    }
  }

  @Test
  void shouldKeepDefaultsSizedForMinutes() {
    LoadBench.All all = new LoadBench.All();
    new CommandLine(all).parseArgs();
    assertEquals(List.of(1, 8, 32), all.sync.partitions);
    assertEquals(List.of(1, 10, 100, 1000), all.sync.batches);
    assertEquals(List.of(100, 1024), all.throughput.sizes);
    assertEquals(16, all.throughput.partitions);
    assertEquals(1000, all.latency.rate);
    assertEquals(5000, all.latency.longPollMs, "the latency scenario's consumer long-polls by default");
    assertEquals("flush", all.common.durability);
  }

  @Test
  void shouldReplaceOnlyTheMarkedSectionOfADoc(@TempDir Path dir) throws IOException {
    Path doc = dir.resolve("b.md");
    Files.writeString(doc, "# B\nbefore\n<!-- bench:begin -->\nold\n<!-- bench:end -->\nafter\n");
    LoadBench.updateDoc(doc, "new table\n");
    assertEquals("# B\nbefore\n<!-- bench:begin -->\nnew table\n<!-- bench:end -->\nafter\n", Files.readString(doc));
  }

  @Test
  void shouldRefuseADocWithoutMarkers(@TempDir Path dir) throws IOException {
    Path doc = dir.resolve("b.md");
    Files.writeString(doc, "# B\n");
    assertThrows(IOException.class, () -> LoadBench.updateDoc(doc, "x"));
  }

  @Test
  void shouldWriteChartsToTheOutputDirectoryUnlessDocsIsGivenAndKeepTheToldWarmup(@TempDir Path dir) throws Exception {
    LoadBench.All all = new LoadBench.All();
    new CommandLine(all).parseArgs("--out", dir.toString(), "--warmup", "7");
    try (Progress progress = new Progress()) {
      BenchContext ctx = all.common.context(new Report(dir, System.out), progress, dir);
      assertEquals(dir, ctx.docsDir);
      assertEquals(7.0, ctx.warmupSeconds);
      assertEquals(null, ctx.profileDir);
      assertEquals(null, ctx.remoteEndpoint);
    }
    LoadBench.All withDocs = new LoadBench.All();
    new CommandLine(withDocs).parseArgs("--out", dir.toString(), "--docs", "docs", "--profile");
    try (Progress progress = new Progress()) {
      BenchContext ctx = withDocs.common.context(new Report(dir, System.out), progress, dir);
      assertEquals(Path.of("docs"), ctx.docsDir);
      assertTrue(ctx.profileDir.getFileName().toString().endsWith("-profiles"), ctx.profileDir.toString());
      assertEquals(dir, ctx.profileDir.getParent());
    }
  }

  @Test
  void shouldTargetARunningServerOnlyWithACredentialAndWithoutProfiling(@TempDir Path dir) throws Exception {
    try (Progress progress = new Progress()) {
      LoadBench.All noCredential = new LoadBench.All();
      new CommandLine(noCredential).parseArgs("--out", dir.toString(), "--endpoint", "http://h:8080");
      assertThrows(CommandLine.ParameterException.class,
          () -> noCredential.common.context(new Report(dir, System.out), progress, dir));
      LoadBench.All profiled = new LoadBench.All();
      new CommandLine(profiled).parseArgs("--out", dir.toString(), "--endpoint", "http://h:8080", "--credential",
          dir.resolve("c.properties").toString(), "--profile");
      assertThrows(CommandLine.ParameterException.class,
          () -> profiled.common.context(new Report(dir, System.out), progress, dir));
      LoadBench.All remote = new LoadBench.All();
      new CommandLine(remote).parseArgs("--out", dir.toString(), "--endpoint", "http://h:8080", "--credential",
          dir.resolve("c.properties").toString());
      BenchContext ctx = remote.common.context(new Report(dir, System.out), progress, dir);
      assertEquals("http://h:8080", ctx.remoteEndpoint);
      // the credential file must exist before anything is started
      assertThrows(IOException.class, ctx::startTalos);
    }
  }
}
