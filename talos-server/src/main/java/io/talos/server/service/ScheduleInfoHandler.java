package io.talos.server.service;

import io.talos.server.cluster.PartitionRouting;
import io.talos.server.metadata.TopicRecord;
import io.talos.thrift.ClusterService;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.GetScheduleInfoRequest;
import io.talos.thrift.GetScheduleInfoResponse;
import io.talos.thrift.PartitionOwner;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * ClusterService.getScheduleInfo: the partition → node map of a topic with the assignment
 * version it was read from, for clients that route straight to each partition's owner. Answered
 * from memory (the routing); a partition that no node serves right now is left out. Any
 * authenticated caller may ask (it names nodes, not data), for a topic that exists.
 *
 * <p>Thread-safe.
 */
public final class ScheduleInfoHandler extends BaseServiceHandler implements ClusterService.Iface {
  private final Topics topics;
  private final Supplier<PartitionRouting> routing;

  public ScheduleInfoHandler(Topics topics, Supplier<PartitionRouting> routing) {
    this.topics = topics;
    this.routing = routing;
  }

  @Override
  public GetScheduleInfoResponse getScheduleInfo(GetScheduleInfoRequest request) throws GalaxyTalosException {
    TopicRecord topic = topics.byName(request == null ? null : request.getTopicName());
    PartitionRouting r = routing.get();
    long version = r.version(); // read first: the map is at least this new
    List<PartitionOwner> owners = new ArrayList<>(topic.partitionCount());
    for (int p = 0; p < topic.partitionCount(); p++) {
      PartitionRouting.Route route = r.route(topic.name(), p);
      if (route.kind() == PartitionRouting.Route.Kind.NOT_SERVING || route.node() == null) continue;
      owners.add(new PartitionOwner(p, route.node().id(), route.node().apiUrl()));
    }
    return new GetScheduleInfoResponse(version, owners);
  }
}
