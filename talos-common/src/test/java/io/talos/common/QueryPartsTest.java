package io.talos.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class QueryPartsTest {
  @Test
  void walksEveryPartWithItsNameAndValue() {
    QueryParts p = new QueryParts("id=7&&acl&type=a=b&x=");
    assertTrue(p.next());
    assertTrue(p.nameIs("id"));
    assertEquals("7", p.value());
    assertTrue(p.next());
    assertTrue(p.nameIs(""), "an empty part has an empty name");
    assertFalse(p.hasValue());
    assertTrue(p.next());
    assertTrue(p.nameIs("acl"));
    assertFalse(p.hasValue());
    assertEquals("", p.value());
    assertTrue(p.next());
    assertTrue(p.nameIs("type"));
    assertFalse(p.nameIs("typ"));
    assertEquals("a=b", p.value(), "the value runs from the first '=' to the next '&'");
    assertTrue(p.next());
    assertTrue(p.hasValue());
    assertEquals("", p.value());
    assertFalse(p.next());
  }

  @Test
  void findsTheFirstValueOfAName() {
    assertEquals("2", QueryParts.first("type&type=2&type=3", "type"), "a part without '=' is skipped");
    assertNull(QueryParts.first(null, "type"));
    assertNull(QueryParts.first("", "type"));
    assertFalse(new QueryParts(null).next());
  }
}
