package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.server.frontend.RequestContext;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.RateQuota;
import io.talos.thrift.DeleteUserQuotaRequest;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.ListUserQuotaResponse;
import io.talos.thrift.QueryUserQuotaResponse;
import io.talos.thrift.QuotaService;
import io.talos.thrift.SetUserQuotaRequest;
import io.talos.thrift.UserQuota;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * QuotaService: the quotas of accounts (the SDK's user quotas), stored in the metadata store and
 * enforced by the throttle on every put and get of the account ({@code io.talos.server.quota}).
 * Setting, deleting and listing them is for the admin credential (checked by the Authorizer
 * before a call gets here); any account may query its own. Thread-safe.
 */
public final class QuotaServiceHandler extends BaseServiceHandler implements QuotaService.Iface {
  private final MetadataStore metadata;
  private final QuotaLimits limits;

  /** @param limits the largest quota values accepted (quota.*.max) */
  public QuotaServiceHandler(MetadataStore metadata, QuotaLimits limits) {
    this.metadata = metadata;
    this.limits = limits;
  }

  @Override
  public void setUserQuota(SetUserQuotaRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    String account = checkAccount(request.getDeveloperId());
    metadata.putUserQuota(account, Quotas.fromWire(request.getUserQuota(), limits));
  }

  @Override
  public ListUserQuotaResponse listUserQuota() {
    Map<String, UserQuota> out = new LinkedHashMap<>();
    metadata.userQuotas().forEach((account, q) -> out.put(account, Quotas.toWireUser(q)));
    return new ListUserQuotaResponse(out);
  }

  @Override
  public QueryUserQuotaResponse queryUserQuota() throws GalaxyTalosException {
    String account = RequestContext.current().credential().ownerId();
    RateQuota q = account == null ? null : metadata.userQuota(account).orElse(null);
    if (q == null) {
      throw TalosErrors.of(ErrorCode.QUOTA_NOT_EXIST, "account '" + account + "' has no user quota; only the"
          + " node's per-partition limits apply");
    }
    return new QueryUserQuotaResponse(Quotas.toWireUser(q));
  }

  @Override
  public void deleteUserQuota(DeleteUserQuotaRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    String account = checkAccount(request.getDeveloperId());
    if (!metadata.deleteUserQuota(account)) {
      throw TalosErrors.of(ErrorCode.QUOTA_NOT_EXIST, "account '" + account + "' has no user quota");
    }
  }

  private static String checkAccount(String account) throws GalaxyTalosException {
    if (account == null || !CredentialServiceHandler.ACCOUNT_ID.matcher(account).matches()) {
      throw TalosErrors.invalidParams("developerId '" + account + "' is not an account id (1..64 characters of"
          + " A-Z a-z 0-9 . _ -)");
    }
    return account;
  }
}
