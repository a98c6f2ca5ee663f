package io.talos.server.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.MetricRegistry;
import io.talos.server.metadata.Credential;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.QuotaService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the service error boundary does with Errors: OOM passes through, others are answered. */
class ErrorBoundaryTest {
  final MetricRegistry metrics = new MetricRegistry();

  @BeforeEach
  void bind() {
    RequestContext.bind(new RequestContext(new Credential("id", "secret", "owner", true), true, "r1"));
  }

  @AfterEach
  void unbind() {
    RequestContext.unbind();
  }

  /** A quota service whose listUserQuota throws {@code error}. */
  QuotaService.Iface throwing(Error error) {
    QuotaService.Iface target = (QuotaService.Iface) java.lang.reflect.Proxy.newProxyInstance(
        getClass().getClassLoader(), new Class<?>[] {QuotaService.Iface.class}, (proxy, method, args) -> {
          throw error;
        });
    return ErrorBoundary.wrap(QuotaService.Iface.class, target, metrics);
  }

  @Test
  void outOfMemoryIsRethrownNotAnswered() {
    OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
    assertEquals(oom, assertThrows(OutOfMemoryError.class, () -> throwing(oom).listUserQuota()));
    assertEquals(oom, assertThrows(OutOfMemoryError.class,
        () -> ErrorBoundary.answer("putMessage", oom, metrics, RequestContext.current())));
    assertTrue(metrics.getMeters().keySet().stream().noneMatch(k -> k.startsWith("errors.")), metrics.getMeters().keySet().toString());
  }

  @Test
  void otherErrorsAreAnsweredAsInternalErrorsAndCounted() {
    GalaxyTalosException e = assertThrows(GalaxyTalosException.class,
        () -> throwing(new StackOverflowError()).listUserQuota());
    assertEquals(ErrorCode.INTERNAL_SERVER_ERROR, e.getErrorCode());
    assertTrue(e.getErrMsg().contains("StackOverflowError"), e.getErrMsg());
    assertEquals(1, metrics.meter("errors.INTERNAL_SERVER_ERROR").getCount());
  }

  @Test
  void briefKeepsAFewFramesOfAHugeStack() {
    StackOverflowError deep = new StackOverflowError();
    StackTraceElement[] frames = new StackTraceElement[1024];
    java.util.Arrays.fill(frames, new StackTraceElement("C", "m", "C.java", 1));
    deep.setStackTrace(frames);
    String brief = ErrorBoundary.brief(deep);
    assertEquals(7, brief.split("\n").length, brief);
    assertTrue(brief.endsWith("... 1019 more frames"), brief);
  }
}
