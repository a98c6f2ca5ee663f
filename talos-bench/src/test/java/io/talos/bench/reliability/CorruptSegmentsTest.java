package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scenario 3, short form: every damage kind on every file kind, closed and crashed logs. */
class CorruptSegmentsTest {
  @TempDir Path tmp;

  @Test
  void noAcknowledgedRecordBeforeTheDamageIsLostAndNoWrongDataIsServed() throws Exception {
    Tally t = new CorruptSegments(new CorruptSegments.Options(48, 11), tmp, new Progress(System.err)).run();
    System.out.println(t);
    assertEquals(0, t.lost(), t.toString());
    assertTrue(t.readBack() > 0, t.toString());
  }

  @Test
  void aTornTailOfTheNewestSegmentIsCutBackToTheLastWholeRecord() throws Exception {
    CorruptSegments s = new CorruptSegments(new CorruptSegments.Options(1, 1), tmp, new Progress(System.err));
    CorruptSegments.Outcome o = s.runCase(tmp.resolve("torn"), CorruptSegments.Target.NEWEST_LOG,
        CorruptSegments.Kind.TRUNCATE_TAIL, false, new Random(3));
    assertEquals(0, o.lostBeforeDamage());
    assertEquals(0, o.wrongData());
    assertEquals(1, o.cutBack(), "only the torn last record: " + o);
    assertEquals(o.acknowledged() - 1, o.readBack(), o.toString());
  }

  @Test
  void damageInTheMiddleOfASealedSegmentIsRefusedNotSkipped() throws Exception {
    CorruptSegments s = new CorruptSegments(new CorruptSegments.Options(1, 1), tmp, new Progress(System.err));
    CorruptSegments.Outcome o = s.runCase(tmp.resolve("middle"), CorruptSegments.Target.SEALED_LOG,
        CorruptSegments.Kind.FLIP_MIDDLE, true, new Random(5));
    assertEquals(0, o.lostBeforeDamage(), o.toString());
    assertEquals(0, o.wrongData(), o.toString());
    assertTrue(o.refused() >= 1, "the damaged record is refused with an error: " + o);
  }
}
