/* ConsumerService, wire-compatible with Talos SDK 2.0.2 (see common.thrift for the rules). */
include "common.thrift"
namespace java io.talos.thrift

struct ConsumeUnit {
  1: required string consumerGroup,
  2: required common.TopicTalosResourceName topicTalosResourceName,
  3: required list<i32> partitionIdList,
  4: required string workerId,
}

struct CheckPoint {
  1: required string consumerGroup,
  2: required common.TopicAndPartition topicAndPartition,
  3: required i64 msgOffset,
  4: required string workerId,
  5: optional i64 lastCommitOffset,
}

struct LockPartitionRequest {
  1: required ConsumeUnit consumeUnit,
}

struct LockPartitionResponse {
  1: required list<i32> successPartitions,
  2: required list<i32> failedPartitions,
}

struct LockWorkerRequest {
  1: required ConsumeUnit consumeUnit,
}

struct LockWorkerResponse {
  1: required bool registerSuccess,
}

struct UnlockPartitionRequest {
  1: required ConsumeUnit consumeUnit,
}

struct RenewRequest {
  1: required ConsumeUnit consumeUnit,
}

struct RenewResponse {
  1: required bool heartbeatSuccess,
  2: required list<i32> failedPartitionList,
}

struct UpdateOffsetRequest {
  1: required CheckPoint checkpoint,
}

struct UpdateOffsetResponse {
  1: required bool success,
}

struct QueryOffsetRequest {
  1: required string consumerGroup,
  2: required common.TopicAndPartition topicAndPartition,
}

struct QueryOffsetResponse {
  1: required i64 msgOffset,
}

struct QueryWorkerRequest {
  1: required string consumerGroup,
  2: required common.TopicTalosResourceName topicTalosResourceName,
}

struct QueryWorkerResponse {
  1: required map<string, list<i32>> workerMap,
}

/* Extension: the consumer groups the server knows (groups with a registered worker, a lock or a committed offset). */
struct ListConsumerGroupsRequest {
  /* only this topic's groups; absent: every topic's */
  1: optional string topicName,
}

struct ConsumerGroupInfo {
  1: required string consumerGroup,
  2: required string topicName,
  3: required common.TopicTalosResourceName topicTalosResourceName,
}

struct ListConsumerGroupsResponse {
  /* sorted by topic name, then group */
  1: required list<ConsumerGroupInfo> groups,
}
