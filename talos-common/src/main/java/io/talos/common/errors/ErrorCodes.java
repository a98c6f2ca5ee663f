package io.talos.common.errors;

import io.talos.thrift.ErrorCode;
import java.util.EnumSet;
import java.util.Set;

/**
 * What each wire {@link ErrorCode} means for a caller: whether retrying the same request can
 * succeed, and which code an SDK 2.0.2 client (which knows only codes up to 32) is sent instead
 * of a Talos extension code.
 *
 * <p>The numbers themselves are the wire contract, fixed in {@code common.thrift}.
 */
public final class ErrorCodes {
  private static final Set<ErrorCode> RETRIABLE = EnumSet.of(
      ErrorCode.PARTITION_NOT_SERVING,
      ErrorCode.HDFS_OPERATION_FAILED,
      ErrorCode.HBASE_OPERATION_FAILED,
      ErrorCode.ZOOKEEPER_OPERATION_FAILED,
      ErrorCode.EXCESSIVE_PENDING_MESSAGE,
      ErrorCode.REQUEST_PROCESS_TIMEOUT,
      ErrorCode.LOCK_EXIST);

  /** Highest code number the Talos SDK 2.0.2 knows. */
  public static final int LAST_SDK_CODE = 32;

  private ErrorCodes() {}

  public static boolean isRetriable(ErrorCode code) {
    return RETRIABLE.contains(code);
  }

  /**
   * The code to send to a client that only knows the SDK 2.0.2 numbers: the extension codes map
   * to the nearest SDK code (the message still says precisely what was wrong).
   */
  public static ErrorCode forLegacyClient(ErrorCode code) {
    if (code.getValue() <= LAST_SDK_CODE) return code;
    switch (code) {
      case INVALID_REQUEST_PARAMS: return ErrorCode.INVALID_TOPIC_PARAMS;
      case NOT_SUPPORTED: return ErrorCode.OPERATION_FAILED;
      case REQUEST_PROCESS_TIMEOUT: return ErrorCode.OPERATION_FAILED;
      case OUT_OF_ORDER_SEQUENCE: return ErrorCode.INVALID_TOPIC_PARAMS;
      default: return ErrorCode.UNEXPECTED_ERROR;
    }
  }
}
