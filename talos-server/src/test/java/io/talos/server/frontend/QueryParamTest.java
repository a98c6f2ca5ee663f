package io.talos.server.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** {@link ApiHandler#queryParam}: the value of one parameter of a raw query string. */
class QueryParamTest {
  @Test
  void shouldFindAParameterAnywhereInTheQuery() {
    assertEquals("putMessage", ApiHandler.queryParam("type=putMessage", "type"));
    assertEquals("putMessage", ApiHandler.queryParam("id=7&type=putMessage", "type"));
    assertEquals("7", ApiHandler.queryParam("id=7&type=putMessage", "id"));
    assertEquals("a=b", ApiHandler.queryParam("x=1&type=a=b&y=2", "type"), "the value runs to the next '&'");
    assertEquals("", ApiHandler.queryParam("type=&id=7", "type"));
  }

  @Test
  void shouldMatchTheWholeNameOnly() {
    assertNull(ApiHandler.queryParam("types=putMessage", "type"));
    assertNull(ApiHandler.queryParam("xtype=putMessage", "type"));
    assertNull(ApiHandler.queryParam("ty=putMessage", "type"));
    assertEquals("2", ApiHandler.queryParam("typ=1&type=2", "type"));
  }

  @Test
  void shouldAnswerNullWithoutTheParameter() {
    assertNull(ApiHandler.queryParam(null, "type"));
    assertNull(ApiHandler.queryParam("", "type"));
    assertNull(ApiHandler.queryParam("type", "type"), "a name without '=' has no value");
    assertNull(ApiHandler.queryParam("&&id=7&", "type"));
    assertNull(ApiHandler.queryParam("=x&type", "type"));
  }
}
