package io.talos.server.metadata;

/**
 * A rate quota as stored: the rate fields of the SDK's {@code BaseQuota} (topic quotas, and the
 * base of a user quota). Every limit is per second over the whole cluster; a negative value
 * means "no limit". {@code topicCount} is used by user quotas only (most topics the account may
 * own; negative: no limit); {@code spaceBytes} is kept and reported, not enforced.
 */
public record RateQuota(long spaceBytes, long putRequestsPerSec, long getRequestsPerSec,
    long putBytesPerSec, long getBytesPerSec, long topicCount) {

  public static final RateQuota UNLIMITED = new RateQuota(-1, -1, -1, -1, -1, -1);

  public boolean unlimited() {
    return equals(UNLIMITED);
  }
}
