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

  /** A decoded call: the method's function, its argument struct, the message header. */
  @SuppressWarnings("rawtypes")
  record Call(ProcessFunction function, TBase args, TMessage message) {
    String method() {
      return message.name;
    }
  }

  /**
   * @param expectedMethod the method named by the request's {@code type} query parameter, or null
   */
  @SuppressWarnings("rawtypes")
  Call decode(byte[] body, int length, String expectedMethod) throws MalformedRequestException {
    try {
      TProtocol in = new TCompactProtocol(new TMemoryInputTransport(configuration, body, 0, length));
      TMessage message = in.readMessageBegin();
      if (message.type != TMessageType.CALL && message.type != TMessageType.ONEWAY) {
        throw new MalformedRequestException("Thrift message type " + message.type + " is not a call");
      }
      ProcessFunction fn = functions.get(message.name);
      if (fn == null) {
        throw new MalformedRequestException("unknown method '" + message.name + "' of " + serviceName
            + "; known: " + String.join(", ", new java.util.TreeSet<>(functions.keySet())));
      }
      if (expectedMethod != null && !expectedMethod.equals(message.name)) {
        throw new MalformedRequestException("query parameter type=" + expectedMethod
            + " does not match the Thrift method '" + message.name + "'");
      }
      TBase args = fn.getEmptyArgsInstance();
      args.read(in);
      in.readMessageEnd();
      return new Call(fn, args, message);
    } catch (TException | RuntimeException e) {
      throw new MalformedRequestException("corrupt Thrift compact body for " + serviceName + ": " + e);
    }
  }

  /** Runs a decoded call on this thread, with {@code ctx} bound, and encodes the reply. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  byte[] execute(Call call, RequestContext ctx) {
    TBase result;
    RequestContext.bind(ctx);
    try {
      result = call.function().getResult(service, call.args());
    } catch (TException e) {
      // Only undeclared exceptions get here; the ErrorBoundary prevents them.
      return encode(new TMessage(call.method(), TMessageType.EXCEPTION, call.message().seqid),
          new TApplicationException(TApplicationException.INTERNAL_ERROR, e.getMessage()));
    } finally {
      RequestContext.unbind();
    }
    return reply(call, result);
  }

  /** Encodes {@code result} (the method's generated {@code *_result} struct) as the call's reply. */
  @SuppressWarnings("rawtypes")
  static byte[] reply(Call call, TBase result) {
    return encode(new TMessage(call.method(), TMessageType.REPLY, call.message().seqid), result);
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
