package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.TalosBaseService;
import io.talos.thrift.Version;

/** TalosBaseService, which every service extends: the server's version and client check. */
public abstract class BaseServiceHandler implements TalosBaseService.Iface {
  /** The protocol version this server speaks: that of the Talos SDK it is compatible with. */
  public static final Version SERVICE_VERSION = new Version(2, 0, 2, "2026-11-22")
      .setDetails("talos-server 0.1.0, wire-compatible with galaxy-talos-sdk 2.0.2");

  @Override
  public Version getServiceVersion() {
    return SERVICE_VERSION.deepCopy();
  }

  /** Every 2.x client speaks this protocol; older majors are refused. */
  @Override
  public void validClientVersion(Version clientVersion) throws GalaxyTalosException {
    if (clientVersion != null && clientVersion.getMajor() < 2) {
      throw TalosErrors.of(ErrorCode.INVALID_REQUEST_PARAMS, "client version " + clientVersion.getMajor()
          + "." + clientVersion.getMinor() + " is not supported; use 2.x");
    }
  }

  protected static GalaxyTalosException notSupported(String feature) {
    return TalosErrors.of(ErrorCode.NOT_SUPPORTED, feature + " is not available in this Talos server yet");
  }
}
