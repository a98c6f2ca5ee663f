package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.server.ServerConfig;
import io.talos.thrift.GalaxyTalosException;

/**
 * The largest values a topic or user quota may set, checked before a quota is stored: {@code
 * quota.bytes.per.sec.max}, {@code quota.requests.per.sec.max}, {@code quota.topics.max}. A value
 * of 0 or less means "no limit" and is always allowed. Immutable.
 */
public record QuotaLimits(long maxBytesPerSec, long maxRequestsPerSec, long maxTopics) {
  /** No bound beyond the wire types (for tests of other things). */
  public static final QuotaLimits NONE = new QuotaLimits(Long.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE);

  public static QuotaLimits from(ServerConfig config) {
    return new QuotaLimits(config.getLong(ServerConfig.QUOTA_BYTES_PER_SEC_MAX),
        config.getLong(ServerConfig.QUOTA_REQUESTS_PER_SEC_MAX), config.getLong(ServerConfig.QUOTA_TOPICS_MAX));
  }

  void checkBytes(String field, long value) throws GalaxyTalosException {
    check(field, value, maxBytesPerSec, "bytes/s", ServerConfig.QUOTA_BYTES_PER_SEC_MAX);
  }

  void checkRequests(String field, long value) throws GalaxyTalosException {
    check(field, value, maxRequestsPerSec, "requests/s", ServerConfig.QUOTA_REQUESTS_PER_SEC_MAX);
  }

  void checkTopics(String field, long value) throws GalaxyTalosException {
    check(field, value, maxTopics, "topics", ServerConfig.QUOTA_TOPICS_MAX);
  }

  private static void check(String field, long value, long max, String unit, String key) throws GalaxyTalosException {
    if (value > max) {
      throw TalosErrors.invalidParams(field + " " + value + " is too large; at most " + max + " " + unit + " ("
          + key + "), or 0 for no limit");
    }
  }
}
