package io.talos.server.frontend;

import java.util.Map;
import org.apache.thrift.ProcessFunction;
import org.apache.thrift.TBase;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TException;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.transport.TMemoryBuffer;
import org.apache.thrift.transport.TMemoryInputTransport;

/**
 * Decodes one Thrift compact message (a call), runs it against a service implementation and
 * encodes the reply, using the generated {@code Processor}'s per-method functions for the
 * argument and result structs.
 *
 * <p>Unlike the generated {@code Processor.process}, a body that cannot be decoded is reported to
 * the caller ({@link MalformedRequestException}, answered with HTTP 400) instead of a generic
 * Thrift application error, and the caller's {@link RequestContext} is bound around the call.
 * Declared service exceptions travel in the result struct as usual; the service implementation
 * is expected to be wrapped in an {@link ErrorBoundary} so that nothing else escapes.
 *
 * <p>Thread-safe: keeps no per-call state.
 */
final class ThriftDispatcher {
  private final String serviceName;
  private final Object service;
  @SuppressWarnings("rawtypes")
  private final Map<String, ProcessFunction> functions;
  private final TConfiguration configuration;

  @SuppressWarnings({"rawtypes", "unchecked"})
  ThriftDispatcher(String serviceName, Object service, Map functions, int maxMessageBytes) {
    this.serviceName = serviceName;
    this.service = service;
    this.functions = Map.copyOf(functions);
    this.configuration = new TConfiguration(maxMessageBytes, maxMessageBytes,
        TConfiguration.DEFAULT_RECURSION_DEPTH);
  }

  /** The body does not hold a well-formed call to a method of this service. */
  static final class MalformedRequestException extends Exception {
    MalformedRequestException(String message) {
      super(message);
    }
  }

  /**
   * @param expectedMethod the method named by the request's {@code type} query parameter, or null
   * @return the encoded reply message
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  byte[] dispatch(byte[] body, int length, String expectedMethod, RequestContext ctx)
      throws MalformedRequestException {
    TMessage message;
    TBase args;
    ProcessFunction fn;
    try {
      TProtocol in = new TCompactProtocol(new TMemoryInputTransport(configuration, body, 0, length));
      message = in.readMessageBegin();
      if (message.type != TMessageType.CALL && message.type != TMessageType.ONEWAY) {
        throw new MalformedRequestException("Thrift message type " + message.type + " is not a call");
      }
      fn = functions.get(message.name);
      if (fn == null) {
        throw new MalformedRequestException("unknown method '" + message.name + "' of " + serviceName
            + "; known: " + String.join(", ", new java.util.TreeSet<>(functions.keySet())));
      }
      if (expectedMethod != null && !expectedMethod.equals(message.name)) {
        throw new MalformedRequestException("query parameter type=" + expectedMethod
            + " does not match the Thrift method '" + message.name + "'");
      }
      args = fn.getEmptyArgsInstance();
      args.read(in);
      in.readMessageEnd();
    } catch (TException | RuntimeException e) {
      throw new MalformedRequestException("corrupt Thrift compact body for " + serviceName + ": " + e);
    }

    TBase result;
    RequestContext.bind(ctx);
    try {
      result = fn.getResult(service, args);
    } catch (TException e) {
      // Only undeclared exceptions get here; the ErrorBoundary prevents them.
      return encode(new TMessage(message.name, TMessageType.EXCEPTION, message.seqid),
          new TApplicationException(TApplicationException.INTERNAL_ERROR, e.getMessage()));
    } finally {
      RequestContext.unbind();
    }
    return encode(new TMessage(message.name, TMessageType.REPLY, message.seqid), result);
  }

  @SuppressWarnings("rawtypes")
  private static byte[] encode(TMessage header, Object body) {
    try {
      TMemoryBuffer buffer = new TMemoryBuffer(1024);
      TProtocol out = new TCompactProtocol(buffer);
      out.writeMessageBegin(header);
      if (body instanceof TBase) ((TBase) body).write(out);
      else ((TApplicationException) body).write(out);
      out.writeMessageEnd();
      return java.util.Arrays.copyOf(buffer.getArray(), buffer.length());
    } catch (TException e) {
      throw new IllegalStateException("cannot encode a Thrift reply", e);
    }
  }
}
