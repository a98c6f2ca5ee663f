package io.talos.server.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PoolConfigTest {

  @Test
  void shouldUseDocumentedDefaults() {
    PoolConfig config = PoolConfig.defaults();
    assertEquals(8, config.workers());
    assertEquals(10_000, config.maxWaitingTasks());
    assertEquals(List.of("admin", "put", "get"), config.priorityClasses());
    assertEquals(64, config.maxBatchCount());
    assertEquals(2, config.maxLentRuns());
    assertEquals(4L * 1024 * 1024, config.maxBatchBytes());
    assertEquals(10_000L, config.defaultDeadlineMs());
    assertInstanceOf(LeastLoadedWorkerSelector.class, config.selector());
    assertEquals(30_000L, config.closeTimeoutMs());
    assertSame(ThreadSlicePolicy.NONE, config.threadSlices());
  }

  @Test
  void shouldReportEveryInvalidSettingByNameAtOnce() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PoolConfig.builder()
        .workers(0).maxWaitingTasks(0).priorityClasses("put", "put").maxBatchCount(0).maxBatchBytes(0)
        .maxLentRuns(0).defaultDeadlineMs(0).selector(null).closeTimeoutMs(-1).busyRatioWindowMs(0).threadSlices(null).build());
    String message = e.getMessage();
    for (String expected : List.of("workers=0 must be between 1 and 4096", "maxWaitingTasks=0",
        "priorityClasses=[put, put] names 'put' twice", "maxBatchCount=0", "maxBatchBytes=0",
        "maxLentRuns=0 must be between 1 and 1000",
        "defaultDeadlineMs=0", "selector must be set", "closeTimeoutMs=-1", "busyRatioWindowMs=0",
        "threadSlices must be set")) {
      assertTrue(message.contains(expected), "'" + expected + "' missing from: " + message);
    }
  }

  @Test
  void shouldRejectEmptyOrBlankPriorityClasses() {
    assertThrows(IllegalArgumentException.class, () -> PoolConfig.builder().priorityClasses(List.of()).build());
    assertThrows(IllegalArgumentException.class, () -> PoolConfig.builder().priorityClasses("put", " ").build());
  }

  @Test
  void shouldMapPriorityClassNamesToServingOrder() {
    PoolConfig config = PoolConfig.builder().priorityClasses("get", "put", "admin").build();
    assertEquals(0, config.priorityOf("get"));
    assertEquals(2, config.priorityOf("admin"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> config.priorityOf("scan"));
    assertTrue(e.getMessage().contains("scan"), e.getMessage());
  }

  @Test
  void shouldCopyEverySettingIntoABuilder() {
    PoolConfig config = PoolConfig.builder().workers(3).maxWaitingTasks(7).priorityClasses("a", "b")
        .maxBatchCount(5).maxLentRuns(4).maxBatchBytes(99).defaultDeadlineMs(11).selector(new HashedWorkerSelector())
        .closeTimeoutMs(13).busyRatioWindowMs(17).threadSlices(ThreadSlicePolicy.always(250)).build();
    assertEquals(config.toString(), config.toBuilder().build().toString());
  }

  @Test
  void shouldNameSelectorsForConfigurationFiles() {
    assertInstanceOf(LeastLoadedWorkerSelector.class, WorkerSelector.named("least-loaded"));
    assertInstanceOf(HashedWorkerSelector.class, WorkerSelector.named(" Hashed "));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WorkerSelector.named("random"));
    assertTrue(e.getMessage().contains("least-loaded or hashed"), e.getMessage());
  }
}
