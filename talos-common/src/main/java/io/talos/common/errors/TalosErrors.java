package io.talos.common.errors;

import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;

/** Builds the wire exception; every error the server answers with goes through here. */
public final class TalosErrors {
  private TalosErrors() {}

  public static GalaxyTalosException of(ErrorCode code, String message) {
    return new GalaxyTalosException().setErrorCode(code).setErrMsg(message);
  }

  public static GalaxyTalosException invalidParams(String message) {
    return of(ErrorCode.INVALID_REQUEST_PARAMS, message);
  }

  public static GalaxyTalosException topicNotExist(String topic) {
    return of(ErrorCode.TOPIC_NOT_EXIST, "topic '" + topic + "' does not exist");
  }
}
