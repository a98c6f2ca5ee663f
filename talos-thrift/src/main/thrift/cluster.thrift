/*
 * ClusterService (a Talos extension, not in SDK 2.0.2): where each partition is served, so that a
 * client can send puts and gets straight to the owner instead of through forwarding.
 */
include "common.thrift"
namespace java io.talos.thrift

struct GetScheduleInfoRequest {
  1: required string topicName,
}

/* The node serving one partition. */
struct PartitionOwner {
  1: required i32 partitionId,
  2: required string nodeId,
  /* the node's client API base URL, http://host:port */
  3: required string apiUrl,
}

struct GetScheduleInfoResponse {
  /* version of the assignment the map was read from; it only grows */
  1: required i64 version,
  /* one entry per partition that is served right now; a partition absent here is between owners */
  2: required list<PartitionOwner> owners,
}
