/* TopicService, wire-compatible with Talos SDK 2.0.2 (see common.thrift for the rules). */
include "common.thrift"
namespace java io.talos.thrift

enum TopicStatus {
  CREATING = 0,
  ACTIVE = 1,
  DELETING = 2,
  DELETED = 3,
}

struct TopicAttribute {
  1: optional i32 partitionNumber,
  2: optional i32 messageRetentionSecs,
  3: optional map<string, string> attributes,
}

struct TopicInfo {
  1: required string topicName,
  2: required common.TopicTalosResourceName topicTalosResourceName,
  3: required string ownerId,
}

struct PartitionState {
  1: required i32 partitionId,
  2: required i64 startOffset,
  /* sic: the SDK's spelling */
  3: required i64 lastestOffset,
  4: required i64 messageNumber,
  5: required i64 messageBytes,
  6: optional i64 totalMessageNumber,
  7: optional i64 totalMessageBytes,
}

struct TopicState {
  1: required i64 createTimestamp,
  2: required TopicStatus topicStatus,
  3: required i64 messageNumber,
  4: required i64 messageBytes,
  5: required list<PartitionState> partitionStates,
  6: optional i64 totalMessageNumber,
  7: optional i64 totalMessageBytes,
}

struct Topic {
  1: required TopicInfo topicInfo,
  2: required TopicAttribute topicAttribute,
  3: required TopicState topicState,
  4: optional common.BaseQuota topicQuota,
  5: optional map<string, i32> topicAcl,
}

struct CreateTopicRequest {
  1: required string topicName,
  2: required TopicAttribute topicAttribute,
  3: optional common.BaseQuota topicQuota,
  4: optional map<common.Grantee, common.Permission> aclMap,
}

struct CreateTopicResponse {
  1: required TopicInfo topicInfo,
}

struct DeleteTopicRequest {
  1: required common.TopicTalosResourceName topicTalosResourceName,
}

struct ChangeTopicAttributeRequest {
  1: required common.TopicTalosResourceName topicTalosResourceName,
  2: required TopicAttribute topicAttribute,
}

struct DescribeTopicRequest {
  1: required string topicName,
}

struct DescribeTopicResponse {
  1: required TopicInfo topicInfo,
  2: required TopicAttribute topicAttribute,
  3: required TopicState topicState,
  4: required common.BaseQuota topicQuota,
  5: required map<string, i32> aclMap,
}

struct ListTopicsResponse {
  1: required list<TopicInfo> topicInfos,
}

struct SetTopicQuotaRequest {
  1: required common.TopicTalosResourceName topicResourceName,
  2: required common.BaseQuota topicQuota,
}

struct QueryTopicQuotaRequest {
  1: required common.TopicTalosResourceName topicResourceName,
}

struct QueryTopicQuotaResponse {
  1: required common.BaseQuota topicQuota,
}

struct DeleteTopicQuotaRequest {
  1: required common.TopicTalosResourceName topicResourceName,
}

struct SetPermissionRequest {
  1: required common.TopicTalosResourceName topicResourceName,
  2: required common.Grantee grant,
  3: required common.Permission permission,
}

struct RevokePermissionRequest {
  1: required common.TopicTalosResourceName topicResourceName,
  2: required common.Grantee grant,
}

struct ListPermissionRequest {
  1: required common.TopicTalosResourceName topicResourceName,
}

struct ListPermissionResponse {
  1: required map<string, i32> permissions,
}

struct GetPermissionRequest {
  1: required common.TopicTalosResourceName topicResourceName,
  2: required common.Grantee grant,
}

struct GetPermissionResponse {
  1: required i32 permission,
}

struct AddSubResourceNameRequest {
  1: required common.TopicTalosResourceName topicTalosResourceName,
  2: required string orgId,
  3: required string adminTeamId,
}

/*
 * Talos extension (not in SDK 2.0.2): an operator accepts that a partition's missing data is lost.
 * The partition, refused with HDFS_FILE_NOT_EXIST because its log ends below the next offset
 * recorded in the metadata store, continues at that recorded offset. Admin credential only.
 */
struct ResetPartitionRequest {
  /* by name: describing the topic fails while one of its partitions is refused */
  1: required string topicName,
  2: required i32 partitionId,
}

struct ResetPartitionResponse {
  /* the partition after the reset: its first readable offset and the offset the next message gets */
  1: required i64 startOffset,
  2: required i64 nextOffset,
}
