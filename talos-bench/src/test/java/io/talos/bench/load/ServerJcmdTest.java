package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServerJcmdTest {
  /** Abridged from a real answer of JDK 17's jcmd PID VM.native_memory summary. */
  private static final String NMT = """
      11301:

      Native Memory Tracking:

      (Omitting categories weighting less than 1KB)

      Total: reserved=2113999KB, committed=212579KB
             malloc: 18763KB #173830
             mmap:   reserved=2095236KB, committed=193816KB

      -                 Java Heap (reserved=524288KB, committed=89088KB)
                                  (mmap: reserved=524288KB, committed=89088KB)

      -                    Thread (reserved=140824KB, committed=14824KB)
                                  (thread #138)
                                  (stack: reserved=140424KB, committed=14424KB)

      -    Native Memory Tracking (reserved=3100KB, committed=3100KB)
      """;

  /** Abridged from a real answer of jcmd PID GC.class_histogram. */
  private static final String HISTOGRAM = """
      11301:
       num     #instances         #bytes  class name (module)
      -------------------------------------------------------
         1:         43059       24690424  [B (java.base@17.0.15)
         2:          1080        3968368  [C (java.base@17.0.15)
         3:          2777        1443792  [I (java.base@17.0.15)
      Total        248941       38471360
      """;

  @Test
  void shouldReadTheCommittedKibOfEveryNativeMemoryCategoryTotalFirst() {
    Map<String, Long> kb = ServerJcmd.parseNativeMemory(NMT);
    assertEquals(List.of("Total", "Java Heap", "Thread", "Native Memory Tracking"), List.copyOf(kb.keySet()));
    assertEquals(212579L, kb.get("Total"));
    assertEquals(89088L, kb.get("Java Heap"));
    assertEquals(14824L, kb.get("Thread"));
  }

  @Test
  void shouldFindNoCategoryWhenTheJvmDoesNotTrackNativeMemory() {
    assertTrue(ServerJcmd.parseNativeMemory("11301:\nNative memory tracking is not enabled\n").isEmpty());
  }

  @Test
  void shouldKeepTheTopRowsOfTheClassHistogram() {
    List<ServerJcmd.ClassBytes> top = ServerJcmd.parseHistogram(HISTOGRAM, 2);
    assertEquals(List.of(new ServerJcmd.ClassBytes("[B", 43059, 24690424),
        new ServerJcmd.ClassBytes("[C", 1080, 3968368)), top);
  }
}
