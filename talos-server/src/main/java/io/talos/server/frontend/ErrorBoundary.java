package io.talos.server.frontend;

import com.codahale.metrics.MetricRegistry;
import io.talos.common.errors.ErrorCodes;
import io.talos.server.metadata.MetadataException;
import io.talos.server.scheduling.TaskPoolClosedException;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import java.io.IOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The per-request error boundary of a service: every exception a call throws becomes a
 * {@link GalaxyTalosException} with a code and a message, is counted (meter
 * {@code errors.<CODE>}) and logged once: expected outcomes (bad input, missing topic) at debug,
 * failures of the server or its storage at warn with the stack trace. One bad request never
 * disturbs another.
 *
 * <p>Clients that are not our SDK (the Talos SDK 2.0.2 knows codes up to 32 only) receive the
 * nearest SDK code for Talos extension codes; the message is unchanged.
 *
 * <p>An {@link OutOfMemoryError} is never turned into an answer: it is rethrown, so that the JVM's
 * own handling (heap dump, exit on OOM) and the operator see it. Any other {@link Error} (a
 * StackOverflowError, a linkage error) is answered INTERNAL_SERVER_ERROR like a bug, logged in a
 * few lines ({@link #brief}) rather than with a thousand-frame stack.
 */
public final class ErrorBoundary implements InvocationHandler {
  private static final Logger LOG = LoggerFactory.getLogger(ErrorBoundary.class);

  private final Object target;
  private final MetricRegistry metrics;

  private ErrorBoundary(Object target, MetricRegistry metrics) {
    this.target = target;
    this.metrics = metrics;
  }

  public static <T> T wrap(Class<T> iface, T target, MetricRegistry metrics) {
    return iface.cast(Proxy.newProxyInstance(iface.getClassLoader(), new Class<?>[] {iface},
        new ErrorBoundary(target, metrics)));
  }

  @Override
  public Object invoke(Object proxy, java.lang.reflect.Method method, Object[] args) throws Throwable {
    if (method.getDeclaringClass() == Object.class) return method.invoke(target, args);
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof OutOfMemoryError) throw e.getCause();
      throw answer(method.getName(), e.getCause(), metrics, RequestContext.current());
    }
  }

  /**
   * The wire error to answer {@code cause} with, for the caller of {@code ctx}: counted, logged
   * once, mapped to SDK 2.0.2 codes for clients that are not ours. Also used where calls do not
   * go through a proxy (batched puts run by the task pool).
   *
   * @throws OutOfMemoryError {@code cause} itself, when it is one
   */
  public static GalaxyTalosException answer(String method, Throwable cause, MetricRegistry metrics, RequestContext ctx) {
    if (cause instanceof OutOfMemoryError) throw (OutOfMemoryError) cause;
    GalaxyTalosException error = toWire(method, cause);
    metrics.meter("errors." + error.getErrorCode()).mark();
    if (!ctx.talosClient()) {
      error = error.deepCopy().setErrorCode(ErrorCodes.forLegacyClient(error.getErrorCode()));
    }
    return error;
  }

  private static GalaxyTalosException toWire(String method, Throwable cause) {
    if (cause instanceof GalaxyTalosException) {
      GalaxyTalosException e = (GalaxyTalosException) cause;
      if (e.getErrorCode() == null) e.setErrorCode(ErrorCode.UNEXPECTED_ERROR);
      LOG.debug("{} answered {}: {}", method, e.getErrorCode(), e.getErrMsg());
      return e;
    }
    ErrorCode code;
    String message;
    if (cause instanceof TaskPoolClosedException) {
      code = ErrorCode.PARTITION_NOT_SERVING;
      message = "the server is shutting down and did not serve this request; retry: " + cause.getMessage();
      LOG.debug("{} answered {}: {}", method, code, message);
      return new GalaxyTalosException().setErrorCode(code).setErrMsg(message);
    } else if (cause instanceof IOException) {
      code = ErrorCode.HDFS_OPERATION_FAILED;
      message = "storage operation failed, retry later: " + cause.getMessage();
    } else if (cause instanceof MetadataException) {
      // The wire protocol has one code for metadata-store failures, named after Talos's HBase.
      code = ErrorCode.HBASE_OPERATION_FAILED;
      message = "metadata store operation failed, retry later: " + cause.getMessage();
    } else if (cause instanceof Error) {
      code = ErrorCode.INTERNAL_SERVER_ERROR;
      message = "internal error in " + method + ": " + cause;
      LOG.error("{} failed with {}: {}", method, code, brief(cause));
      return new GalaxyTalosException().setErrorCode(code).setErrMsg(message);
    } else {
      code = ErrorCode.INTERNAL_SERVER_ERROR;
      message = "internal error in " + method + ": " + cause;
    }
    LOG.warn("{} failed with {}", method, code, cause);
    return new GalaxyTalosException().setErrorCode(code).setErrMsg(message);
  }

  /**
   * {@code t} and the first frames of its stack, on a few lines: for errors whose full stack is
   * useless or huge (a StackOverflowError has a thousand identical frames).
   */
  public static String brief(Throwable t) {
    StringBuilder b = new StringBuilder(t.toString());
    StackTraceElement[] stack = t.getStackTrace();
    for (int i = 0; i < Math.min(5, stack.length); i++) b.append("\n\tat ").append(stack[i]);
    if (stack.length > 5) b.append("\n\t... ").append(stack.length - 5).append(" more frames");
    return b.toString();
  }
}
