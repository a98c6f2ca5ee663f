/*
 * The Talos services, wire-compatible with Talos SDK 2.0.2 (see common.thrift for the rules).
 * They live in one file because every service extends TalosBaseService, and the code generator
 * cannot extend a service declared in another file.
 */
include "common.thrift"
include "topic.thrift"
include "message.thrift"
include "consumer.thrift"
include "quota.thrift"
include "credential.thrift"
include "cluster.thrift"
namespace java io.talos.thrift

/* Every service extends this. */
service TalosBaseService {
  common.Version getServiceVersion() throws (1: common.GalaxyTalosException e),
  void validClientVersion(1: common.Version clientVersion) throws (1: common.GalaxyTalosException e),
}

service TopicService extends TalosBaseService {
  topic.CreateTopicResponse createTopic(1: topic.CreateTopicRequest request) throws (1: common.GalaxyTalosException e),
  void deleteTopic(1: topic.DeleteTopicRequest request) throws (1: common.GalaxyTalosException e),
  void changeTopicAttribute(1: topic.ChangeTopicAttributeRequest request) throws (1: common.GalaxyTalosException e),
  topic.DescribeTopicResponse describeTopic(1: topic.DescribeTopicRequest request) throws (1: common.GalaxyTalosException e),
  topic.ListTopicsResponse listTopics() throws (1: common.GalaxyTalosException e),
  void setTopicQuota(1: topic.SetTopicQuotaRequest request) throws (1: common.GalaxyTalosException e),
  topic.QueryTopicQuotaResponse queryTopicQuota(1: topic.QueryTopicQuotaRequest request) throws (1: common.GalaxyTalosException e),
  void deleteTopicQuota(1: topic.DeleteTopicQuotaRequest request) throws (1: common.GalaxyTalosException e),
  void setPermission(1: topic.SetPermissionRequest request) throws (1: common.GalaxyTalosException e),
  void revokePermission(1: topic.RevokePermissionRequest request) throws (1: common.GalaxyTalosException e),
  topic.ListPermissionResponse listPermission(1: topic.ListPermissionRequest request) throws (1: common.GalaxyTalosException e),
  topic.GetPermissionResponse getPermission(1: topic.GetPermissionRequest request) throws (1: common.GalaxyTalosException e),
  void addSubResourceName(1: topic.AddSubResourceNameRequest request) throws (1: common.GalaxyTalosException e),
  /* Talos extension: see ResetPartitionRequest. */
  topic.ResetPartitionResponse resetPartition(1: topic.ResetPartitionRequest request) throws (1: common.GalaxyTalosException e),
}

/*
 * SDK 2.0.2 declares no exception on getPartitionOffset and getPartitionsOffset; ours do (a new
 * optional field of the result struct, which the SDK skips).
 */
service MessageService extends TalosBaseService {
  message.PutMessageResponse putMessage(1: message.PutMessageRequest request) throws (1: common.GalaxyTalosException e),
  message.GetMessageResponse getMessage(1: message.GetMessageRequest request) throws (1: common.GalaxyTalosException e),
  message.GetTopicOffsetResponse getTopicOffset(1: message.GetTopicOffsetRequest request) throws (1: common.GalaxyTalosException e),
  message.GetPartitionOffsetResponse getPartitionOffset(1: message.GetPartitionOffsetRequest request) throws (1: common.GalaxyTalosException e),
  message.GetPartitionsOffsetResponse getPartitionsOffset(1: message.GetPartitionsOffsetRequest request) throws (1: common.GalaxyTalosException e),
  /* Talos extension: a producer id for idempotent puts (see PutMessageRequest.producerId). */
  message.InitProducerIdResponse initProducerId(1: message.InitProducerIdRequest request) throws (1: common.GalaxyTalosException e),
  /* Talos extension: see GetOffsetForTimestampRequest. */
  message.GetOffsetForTimestampResponse getOffsetForTimestamp(1: message.GetOffsetForTimestampRequest request) throws (1: common.GalaxyTalosException e),
}

/*
 * SDK 2.0.2 declares an exception only on queryOffset; ours declare one everywhere (a new
 * optional field of each result struct, which the SDK skips).
 */
service ConsumerService extends TalosBaseService {
  consumer.LockPartitionResponse lockPartition(1: consumer.LockPartitionRequest request) throws (1: common.GalaxyTalosException e),
  consumer.LockWorkerResponse lockWorker(1: consumer.LockWorkerRequest request) throws (1: common.GalaxyTalosException e),
  void unlockPartition(1: consumer.UnlockPartitionRequest request) throws (1: common.GalaxyTalosException e),
  consumer.RenewResponse renew(1: consumer.RenewRequest request) throws (1: common.GalaxyTalosException e),
  consumer.UpdateOffsetResponse updateOffset(1: consumer.UpdateOffsetRequest request) throws (1: common.GalaxyTalosException e),
  consumer.QueryOffsetResponse queryOffset(1: consumer.QueryOffsetRequest request) throws (1: common.GalaxyTalosException e),
  consumer.QueryWorkerResponse queryWorker(1: consumer.QueryWorkerRequest request) throws (1: common.GalaxyTalosException e),
  /* Talos extension: see ListConsumerGroupsRequest. */
  consumer.ListConsumerGroupsResponse listConsumerGroups(1: consumer.ListConsumerGroupsRequest request) throws (1: common.GalaxyTalosException e),
}

service QuotaService extends TalosBaseService {
  void setUserQuota(1: quota.SetUserQuotaRequest request) throws (1: common.GalaxyTalosException e),
  quota.ListUserQuotaResponse listUserQuota() throws (1: common.GalaxyTalosException e),
  quota.QueryUserQuotaResponse queryUserQuota() throws (1: common.GalaxyTalosException e),
  void deleteUserQuota(1: quota.DeleteUserQuotaRequest request) throws (1: common.GalaxyTalosException e),
}


/* Talos extension: accounts and their credentials, admin only (see credential.thrift). */
service CredentialService extends TalosBaseService {
  credential.CreateCredentialResponse createCredential(1: credential.CreateCredentialRequest request) throws (1: common.GalaxyTalosException e),
  credential.ListCredentialsResponse listCredentials() throws (1: common.GalaxyTalosException e),
  credential.RotateCredentialResponse rotateCredential(1: credential.RotateCredentialRequest request) throws (1: common.GalaxyTalosException e),
  credential.RevokeCredentialResponse revokeCredential(1: credential.RevokeCredentialRequest request) throws (1: common.GalaxyTalosException e),
}

/* Talos extension: the partition → node map for direct routing (see cluster.thrift). */
service ClusterService extends TalosBaseService {
  cluster.GetScheduleInfoResponse getScheduleInfo(1: cluster.GetScheduleInfoRequest request) throws (1: common.GalaxyTalosException e),
}
