package io.talos.server.frontend;

import java.util.Map;
import org.apache.thrift.ProcessFunction;
import org.apache.thrift.TBase;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TException;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
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
 * <p>Bodies are decoded with a {@link BoundedCompactProtocol}: what a body declares (container
 * lengths, string lengths, nesting) is checked before memory is spent on it, and a body must hold
 * exactly one call: bytes after it are refused.
 *
 * <p>Thread-safe: keeps no per-call state.
 */
final class ThriftDispatcher {
  private final String serviceName;
  private final Object service;
  @SuppressWarnings("rawtypes")
  private final Map<String, ProcessFunction> functions;
  private final TConfiguration configuration;
  private final int maxContainerLength;
  private final int maxDepth;
  /**
   * Each thread's decoder, reset for every body: a {@link org.apache.thrift.protocol.TCompactProtocol}
   * allocates its scratch buffers when made, and a decoder and transport per request were a few
   * percent of the server's garbage. It holds no body between calls.
   */
  private final ThreadLocal<BoundedCompactProtocol> decoders;

  /**
   * @param maxContainerLength most elements one list, set or map of a body may declare
   * @param maxDepth deepest nesting of structs and containers in a body
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  ThriftDispatcher(String serviceName, Object service, Map functions, int maxMessageBytes,
      int maxContainerLength, int maxDepth) {
    this.serviceName = serviceName;
    this.service = service;
    this.functions = Map.copyOf(functions);
    this.configuration = new TConfiguration(maxMessageBytes, maxMessageBytes, maxDepth);
    this.maxContainerLength = maxContainerLength;
    this.maxDepth = maxDepth;
    this.decoders = ThreadLocal.withInitial(() -> {
      try {
        return new BoundedCompactProtocol(new TMemoryInputTransport(configuration, BoundedCompactProtocol.NO_BODY), maxContainerLength, maxDepth);
      } catch (org.apache.thrift.transport.TTransportException e) {
        throw new IllegalStateException("cannot make a Thrift decoder", e);
      }
    });
  }

  /**
   * The body does not hold a well-formed call to a method of this service. Carries what the
   * Thrift answer needs: the method name and sequence id when they could be read, and the
   * {@link TApplicationException} type (UNKNOWN_METHOD, INVALID_MESSAGE_TYPE, PROTOCOL_ERROR).
   */
  static final class MalformedRequestException extends Exception {
    final String method;
    final int seqid;
    final int type;

    MalformedRequestException(String message) {
      this(message, null, 0, TApplicationException.PROTOCOL_ERROR);
    }

    MalformedRequestException(String message, String method, int seqid, int type) {
      super(message);
      this.method = method;
      this.seqid = seqid;
      this.type = type;
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
    TMessage message = null;
    BoundedCompactProtocol in = decoders.get();
    try {
      in.start(body, length);
      message = in.readMessageBegin();
      if (message.type != TMessageType.CALL && message.type != TMessageType.ONEWAY) {
        throw new MalformedRequestException("Thrift message type " + message.type + " is not a call",
            message.name, message.seqid, TApplicationException.INVALID_MESSAGE_TYPE);
      }
      ProcessFunction fn = functions.get(message.name);
      if (fn == null) {
        throw new MalformedRequestException("unknown method '" + message.name + "' of " + serviceName
            + "; known: " + String.join(", ", new java.util.TreeSet<>(functions.keySet())),
            message.name, message.seqid, TApplicationException.UNKNOWN_METHOD);
      }
      if (expectedMethod != null && !expectedMethod.equals(message.name)) {
        throw new MalformedRequestException("query parameter type=" + expectedMethod
            + " does not match the Thrift method '" + message.name + "'", message.name, message.seqid,
            TApplicationException.PROTOCOL_ERROR);
      }
      TBase args = fn.getEmptyArgsInstance();
      args.read(in);
      in.readMessageEnd();
      if (in.remaining() > 0) {
        throw new MalformedRequestException("corrupt Thrift compact body for " + serviceName + ": "
            + in.remaining() + " bytes follow the " + message.name + " call; a body holds exactly one call",
            message.name, message.seqid, TApplicationException.PROTOCOL_ERROR);
      }
      return new Call(fn, args, message);
    } catch (TException | RuntimeException e) {
      // RuntimeException: the generated readers throw some on bad data (e.g. an unknown enum
      // read as null into a primitive); never a bug of ours reached through a valid body.
      throw new MalformedRequestException("corrupt Thrift compact body for " + serviceName + ": " + e,
          message == null ? null : message.name, message == null ? 0 : message.seqid, TApplicationException.PROTOCOL_ERROR);
    } finally {
      in.release();
    }
  }

  /**
   * The reply to {@code call} carrying {@code error} in the method's {@code *_result} struct
   * (field {@code e}, which every method of every service declares).
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  static byte[] errorReply(Call call, io.talos.thrift.GalaxyTalosException error) {
    String argsClass = call.args().getClass().getName();
    try {
      TBase result = (TBase) Class.forName(argsClass.substring(0, argsClass.length() - "_args".length()) + "_result")
          .getDeclaredConstructor().newInstance();
      org.apache.thrift.TFieldIdEnum e = null;
      for (Object f : org.apache.thrift.meta_data.FieldMetaData.getStructMetaDataMap(result.getClass()).keySet()) {
        if (((org.apache.thrift.TFieldIdEnum) f).getFieldName().equals("e")) e = (org.apache.thrift.TFieldIdEnum) f;
      }
      if (e == null) throw new IllegalStateException(call.method() + " declares no GalaxyTalosException");
      result.setFieldValue(e, error);
      return reply(call, result);
    } catch (ReflectiveOperationException ex) {
      throw new IllegalStateException("no result struct for " + argsClass, ex);
    }
  }

  /** A Thrift EXCEPTION message: what a Thrift client reads as a {@link TApplicationException}. */
  static byte[] applicationException(String method, int seqid, int type, String message) {
    return encode(new TMessage(method == null ? "" : method, TMessageType.EXCEPTION, seqid),
        new TApplicationException(type, message));
  }

  /** Runs a decoded call on this thread, with {@code ctx} bound, and encodes the reply. */
  byte[] execute(Call call, RequestContext ctx) {
    return execute(call, ctx, null);
  }

  /**
   * As {@link #execute(Call, RequestContext)}, handing the call's {@code *_result} struct (its
   * answer or declared exception) to {@code onResult} before it is encoded (the audit log).
   */
  @SuppressWarnings("rawtypes")
  byte[] execute(Call call, RequestContext ctx, java.util.function.Consumer<TBase> onResult) {
    TBase result;
    try {
      result = result(call, ctx);
    } catch (TException e) {
      return internalError(call, e);
    }
    if (onResult != null) onResult.accept(result);
    return reply(call, result);
  }

  /**
   * As {@link #execute(Call, RequestContext, java.util.function.Consumer)}, the reply gathered
   * ({@link #gatheredReply}): for getMessage, whose answer carries stored blocks that are never
   * changed. {@code onResult} may be null.
   */
  @SuppressWarnings("rawtypes")
  EncodedReply executeGathered(Call call, RequestContext ctx, java.util.function.Consumer<TBase> onResult) {
    TBase result;
    try {
      result = result(call, ctx);
    } catch (TException e) {
      return EncodedReply.of(internalError(call, e));
    }
    if (onResult != null) onResult.accept(result);
    return gatheredReply(call, result);
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  private TBase result(Call call, RequestContext ctx) throws TException {
    RequestContext.bind(ctx);
    try {
      return call.function().getResult(service, call.args());
    } finally {
      RequestContext.unbind();
    }
  }

  /** Only undeclared exceptions get here; the ErrorBoundary prevents them. */
  private static byte[] internalError(Call call, TException e) {
    return encode(new TMessage(call.method(), TMessageType.EXCEPTION, call.message().seqid),
        new TApplicationException(TApplicationException.INTERNAL_ERROR, e.getMessage()));
  }

  /**
   * {@code result} encoded as the call's reply, its large binary fields referred to rather than
   * copied ({@link ExactSizeEncoder#encodeGathered}): they must never change afterwards.
   */
  @SuppressWarnings("rawtypes")
  static EncodedReply gatheredReply(Call call, TBase result) {
    return ExactSizeEncoder.encodeGathered(new TMessage(call.method(), TMessageType.REPLY, call.message().seqid),
        result);
  }

  /** Encodes {@code result} (the method's generated {@code *_result} struct) as the call's reply. */
  @SuppressWarnings("rawtypes")
  static byte[] reply(Call call, TBase result) {
    return encode(new TMessage(call.method(), TMessageType.REPLY, call.message().seqid), result);
  }

  @SuppressWarnings("rawtypes")
  private static byte[] encode(TMessage header, Object body) {
    return ExactSizeEncoder.encode(header, body instanceof TBase ? (TBase) body : null,
        body instanceof TApplicationException ? (TApplicationException) body : null);
  }
}
