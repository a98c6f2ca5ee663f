package io.talos.client.internals;

import io.talos.client.TalosException;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GetScheduleInfoRequest;
import io.talos.thrift.GetScheduleInfoResponse;
import io.talos.thrift.MessageService;
import io.talos.thrift.PartitionOwner;
import io.talos.thrift.TopicAndPartition;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Direct routing: sends each putMessage and getMessage straight to the node serving its
 * partition, from the topic's partition map (ClusterService.getScheduleInfo), instead of through
 * the configured endpoint and a forward.
 *
 * <p>The map of a topic is fetched on its first call and dropped when a call through it answers
 * PARTITION_NOT_SERVING or fails to reach the node (the caller's retry then fetches a fresh one).
 * The configured endpoint is used for a topic whose map says version 0 (a single-node server:
 * the configured endpoint may be a proxy or load balancer), for a partition the map does not list
 * (between owners: the configured node answers or forwards), and for every topic once the server
 * turned out not to know getScheduleInfo (an older server). A map that could not be fetched
 * counts as empty until a call fails (one fetch per topic, not one per call).
 *
 * <p>Thread-safe.
 */
final class PartitionRouter {
  private final TalosRpc rpc;
  private final Map<String, Map<Integer, String>> maps = new ConcurrentHashMap<>();
  private volatile boolean unsupported;

  PartitionRouter(TalosRpc rpc) {
    this.rpc = rpc;
  }

  <R> R call(TopicAndPartition partition, TalosRpc.Call<MessageService.Client, R> call) {
    String endpoint = partition == null || partition.getTopicName() == null ? null
        : endpointOf(partition.getTopicName(), partition.getPartitionId());
    try {
      return endpoint == null ? rpc.message(call) : rpc.message(endpoint, call);
    } catch (TalosException e) {
      if (e.errorCode() == ErrorCode.PARTITION_NOT_SERVING || (e.errorCode() == null && e.isRetriable())) {
        if (partition != null && partition.getTopicName() != null) {
          maps.remove(partition.getTopicName()); // stale: refreshed on the retry
        }
      }
      throw e;
    }
  }

  /** The owner's API URL, or null for the configured endpoint. */
  private String endpointOf(String topic, int partitionId) {
    if (unsupported) return null;
    Map<Integer, String> map = maps.get(topic);
    if (map == null) {
      map = fetch(topic);
      if (map == null) return null;
      maps.put(topic, map);
    }
    return map.get(partitionId);
  }

  private Map<Integer, String> fetch(String topic) {
    GetScheduleInfoResponse info;
    try {
      info = rpc.cluster(c -> c.getScheduleInfo(new GetScheduleInfoRequest(topic)));
    } catch (TalosException e) {
      // 404 (no /v1/api/cluster) or an unknown method: a server without the extension.
      if (e.httpStatus() == 404 || (e.errorCode() == null && !e.isRetriable())) {
        unsupported = true;
        return null;
      }
      // Not now: the configured endpoint (it forwards) until a call through it fails.
      return Map.of();
    }
    Map<Integer, String> map = new HashMap<>();
    if (info.getVersion() > 0) {
      for (PartitionOwner o : info.getOwners()) map.put(o.getPartitionId(), o.getApiUrl());
    }
    return Map.copyOf(map);
  }

  /** Drops every cached map (tests, and callers that learned the cluster changed). */
  void clear() {
    maps.clear();
  }
}
