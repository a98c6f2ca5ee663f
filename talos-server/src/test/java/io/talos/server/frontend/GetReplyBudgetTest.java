package io.talos.server.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class GetReplyBudgetTest {
  @Test
  void shouldGrantWhatAGetAsksForUpToTheServersMaximumPerGet() {
    GetReplyBudget budget = new GetReplyBudget(100, 30);
    assertEquals(20, budget.reserve(20).grantedBytes());
    assertEquals(30, budget.reserve(0).grantedBytes()); // not said: the server's maximum
    assertEquals(30, budget.reserve(1000).grantedBytes());
    assertEquals(80, budget.usedBytes());
  }

  @Test
  void shouldGrantOnlyWhatIsFreeThenOneBlockWhileGetsAreReadingThenRefuseWhenAnswersFillIt() {
    GetReplyBudget budget = new GetReplyBudget(50, 30);
    GetReplyBudget.Reservation first = budget.reserve(30);
    GetReplyBudget.Reservation second = budget.reserve(30);
    assertEquals(20, second.grantedBytes());
    // full of what the two may read, not of answers: one block (the service's minimum)
    GetReplyBudget.Reservation third = budget.reserve(30);
    assertEquals(1, third.grantedBytes());
    third.release();
    first.resizeTo(30);
    second.resizeTo(25); // answers read: 55 bytes held, over the 50
    assertNull(budget.reserve(1));
    assertEquals(55, budget.usedBytes());
    second.release();
    assertEquals(20, budget.reserve(30).grantedBytes());
  }

  @Test
  void shouldHoldTheRealAnswerOnceReadAndGiveItBackOnce() {
    GetReplyBudget budget = new GetReplyBudget(100, 30);
    GetReplyBudget.Reservation small = budget.reserve(30);
    small.resizeTo(5); // the partition had little
    GetReplyBudget.Reservation large = budget.reserve(10);
    large.resizeTo(40); // its one block was larger than the grant
    assertEquals(45, budget.usedBytes());
    large.release();
    large.release();
    large.resizeTo(90); // after release: nothing held any more
    assertEquals(5, budget.usedBytes());
    small.release();
    assertEquals(0, budget.usedBytes());
  }

  @Test
  void shouldRejectABudgetOfNothing() {
    assertThrows(IllegalArgumentException.class, () -> new GetReplyBudget(0, 10));
  }
}
