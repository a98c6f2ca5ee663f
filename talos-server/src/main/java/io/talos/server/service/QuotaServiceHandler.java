package io.talos.server.service;

import io.talos.thrift.DeleteUserQuotaRequest;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.ListUserQuotaResponse;
import io.talos.thrift.QueryUserQuotaResponse;
import io.talos.thrift.QuotaService;
import io.talos.thrift.SetUserQuotaRequest;

/** QuotaService: user quotas are not offered by this server yet; every call says so. */
public final class QuotaServiceHandler extends BaseServiceHandler implements QuotaService.Iface {
  @Override
  public void setUserQuota(SetUserQuotaRequest request) throws GalaxyTalosException {
    throw notSupported("user quotas");
  }

  @Override
  public ListUserQuotaResponse listUserQuota() throws GalaxyTalosException {
    throw notSupported("user quotas");
  }

  @Override
  public QueryUserQuotaResponse queryUserQuota() throws GalaxyTalosException {
    throw notSupported("user quotas");
  }

  @Override
  public void deleteUserQuota(DeleteUserQuotaRequest request) throws GalaxyTalosException {
    throw notSupported("user quotas");
  }
}
