package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.server.metadata.RateQuota;
import io.talos.thrift.BaseQuota;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.UserQuota;

/**
 * Conversions between the SDK's {@code BaseQuota} / {@code UserQuota} and the stored {@link
 * RateQuota}. On the wire as stored, a value of 0 or less (or an unset optional field) means "no
 * limit"; it is stored and answered as -1.
 */
final class Quotas {
  private Quotas() {}

  /** The stored form of a wire quota, each value checked against {@code limits} first. */
  static RateQuota fromWire(BaseQuota q, Integer topicNumberQuota, QuotaLimits limits) throws GalaxyTalosException {
    if (q == null) throw TalosErrors.invalidParams("the quota is missing");
    if (q.isSetPutMessageQpsQuota()) limits.checkRequests("putMessageQpsQuota", q.getPutMessageQpsQuota());
    if (q.isSetGetMessageQpsQuota()) limits.checkRequests("getMessageQpsQuota", q.getGetMessageQpsQuota());
    if (q.isSetPutMessageBytesQpsQuota()) limits.checkBytes("putMessageBytesQpsQuota", q.getPutMessageBytesQpsQuota());
    if (q.isSetGetMessageBytesQpsQuota()) limits.checkBytes("getMessageBytesQpsQuota", q.getGetMessageBytesQpsQuota());
    if (topicNumberQuota != null) limits.checkTopics("topicNumberQuota", topicNumberQuota);
    return new RateQuota(limit(q.getSpaceQuota()),
        q.isSetPutMessageQpsQuota() ? limit(q.getPutMessageQpsQuota()) : -1,
        q.isSetGetMessageQpsQuota() ? limit(q.getGetMessageQpsQuota()) : -1,
        q.isSetPutMessageBytesQpsQuota() ? limit(q.getPutMessageBytesQpsQuota()) : -1,
        q.isSetGetMessageBytesQpsQuota() ? limit(q.getGetMessageBytesQpsQuota()) : -1,
        topicNumberQuota == null ? -1 : limit(topicNumberQuota));
  }

  static RateQuota fromWire(UserQuota q, QuotaLimits limits) throws GalaxyTalosException {
    if (q == null) throw TalosErrors.invalidParams("userQuota is missing");
    return fromWire(q.getBaseQuota(), q.isSetTopicNumberQuota() ? q.getTopicNumberQuota() : null, limits);
  }

  private static long limit(long v) {
    return v <= 0 ? -1 : v;
  }

  static BaseQuota toWire(RateQuota q) {
    return new BaseQuota(q.spaceBytes())
        .setPutMessageQpsQuota((int) Math.min(Integer.MAX_VALUE, q.putRequestsPerSec()))
        .setGetMessageQpsQuota((int) Math.min(Integer.MAX_VALUE, q.getRequestsPerSec()))
        .setPutMessageBytesQpsQuota(q.putBytesPerSec()).setGetMessageBytesQpsQuota(q.getBytesPerSec());
  }

  static UserQuota toWireUser(RateQuota q) {
    return new UserQuota(toWire(q)).setTopicNumberQuota((int) Math.min(Integer.MAX_VALUE, q.topicCount()));
  }
}
