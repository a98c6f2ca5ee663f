package io.talos.server.cluster;

import java.io.IOException;
import java.time.Clock;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Measures this node's load and publishes it in its membership entry, seldom enough that
 * ZooKeeper is not written per request and the map does not flap.
 *
 * <p><b>What is measured.</b> Partition requests served per second: the puts and gets this node's
 * task pool ran for the partitions it owns (received from clients or forwarded by other nodes; a
 * request this node forwards elsewhere is not its load). Each {@link #runOnce} takes the count's
 * increase since the previous call over the time between them, divides it by this node's current
 * traffic factor (so the load is what the node would serve at its full weight: a node that shed
 * half its partitions and serves half as much still reports the same load, and does not take
 * them back at once, which would make the map oscillate), and folds that into an exponentially
 * weighted moving average with time constant {@code windowMs}.
 *
 * <p><b>When it is published.</b> Only if at least {@code publishIntervalMs} passed since the last
 * publication and the average moved by more than {@code changeThresholdPercent} of {@code
 * max(published, floor)}, where {@code floor} is the load per unit of capacity below which
 * {@link LoadFactors} treats every node alike (changes under it cannot change the map). A failed
 * write is tried again on a later step.
 *
 * <p>Thread-safety: {@link #runOnce} is called by one thread at a time (the node's load thread); {@link
 * #load()} and {@link #published()} may be read from any thread.
 */
public final class LoadPublisher {
  private static final Logger LOG = LoggerFactory.getLogger(LoadPublisher.class);

  /**
   * @param sheddingEnabled {@code cluster.assignment.load.shedding.enabled}, published with the load
   * @param windowMs time constant of the moving average ({@code cluster.load.window.ms})
   * @param publishIntervalMs least time between two publications ({@code cluster.load.publish.interval.ms})
   * @param changeThresholdPercent least relative change published ({@code cluster.load.change.threshold.percent})
   */
  public record Settings(boolean sheddingEnabled, long windowMs, long publishIntervalMs, int changeThresholdPercent) {
    public static final Settings OFF = new Settings(false, 60_000, 10_000, 20);
  }

  /** Where the load goes (this node's membership entry). */
  @FunctionalInterface
  public interface Sink {
    void publish(double load, boolean loadShedding) throws IOException;
  }

  private final Settings settings;
  private final LongSupplier requestCount;
  private final DoubleSupplier ownFactor;
  private final double floor;
  private final Sink sink;
  private final Clock clock;
  private long lastCount;
  private long lastSampleMs;
  private long lastPublishMs;
  private volatile double load;
  private volatile double published;

  /**
   * @param requestCount partition requests served so far (monotonic)
   * @param ownFactor this node's traffic factor in the applied map (1 when it does not shed)
   * @param floor load below which nodes count alike (the floor of {@link LoadFactors} times this
   *     node's capacity)
   * @param startMs when the node registered (with load 0): the first publication waits the interval
   */
  public LoadPublisher(Settings settings, LongSupplier requestCount, DoubleSupplier ownFactor, double floor, Sink sink,
      Clock clock) {
    this.settings = settings;
    this.requestCount = requestCount;
    this.ownFactor = ownFactor;
    this.floor = floor;
    this.sink = sink;
    this.clock = clock;
    this.lastCount = requestCount.getAsLong();
    this.lastSampleMs = clock.millis();
    this.lastPublishMs = lastSampleMs;
  }

  /**
   * One measurement, and a publication if it is due.
   *
   * @return true if the load was published
   */
  public boolean runOnce() {
    long now = clock.millis();
    long count = requestCount.getAsLong();
    long elapsedMs = now - lastSampleMs;
    if (elapsedMs <= 0) return false;
    double factor = ownFactor.getAsDouble();
    double rate = Math.max(0, count - lastCount) * 1000.0 / elapsedMs / (factor > 0 ? factor : 1.0);
    double alpha = 1 - Math.exp(-(double) elapsedMs / settings.windowMs());
    load = load + alpha * (rate - load);
    lastCount = count;
    lastSampleMs = now;
    if (now - lastPublishMs < settings.publishIntervalMs()) return false;
    double rounded = Math.round(load * 100) / 100.0; // short JSON; far below any threshold
    if (Math.abs(rounded - published) * 100 <= settings.changeThresholdPercent() * Math.max(published, floor)) {
      return false;
    }
    try {
      sink.publish(rounded, settings.sheddingEnabled());
    } catch (IOException e) {
      LOG.warn("Could not publish this node's load {} req/s; trying again later: {}", rounded, e.getMessage());
      return false;
    }
    published = rounded;
    lastPublishMs = now;
    return true;
  }

  /** The moving average now, in requests/s at full weight. */
  public double load() {
    return load;
  }

  /** The load last published (0 before the first publication). */
  public double published() {
    return published;
  }
}
