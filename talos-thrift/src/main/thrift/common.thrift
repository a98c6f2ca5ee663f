/*
 * Types shared by every Talos service.
 *
 * Wire contract: every struct, field id, field type and enum number here matches the public
 * Talos Java SDK 2.0.2 (galaxy-talos-sdk), so that SDK talks to our server unmodified. Extensions
 * are only ever new optional fields, new methods, or ErrorCode numbers appended at the end.
 * Never renumber or retype a field; retire numbers instead of reusing them.
 */
namespace java io.talos.thrift

/* Stable wire error numbers. Names may change; numbers never do. New codes append. */
enum ErrorCode {
  NO_ERROR = 0,
  UNKNOWN = 1,
  UNEXPECTED_ERROR = 2,
  UNEXPECTED_MESSAGE_OFFSET = 3,
  TOPIC_EXIST = 4,
  TOPIC_NOT_EXIST = 5,
  QUOTA_NOT_EXIST = 6,
  LOCK_EXIST = 7,
  LOCK_NOT_EXIST = 8,
  LOCK_VALUE_NOT_EXPECTED = 9,
  MESSAGE_MISSING = 10,
  MESSAGE_INCOMPLETE = 11,
  MESSAGE_INDEX_UNDESIRED_ERROR = 12,
  MESSAGE_INDEX_NOT_EXIST = 13,
  MESSAGE_OFFSET_OUT_OF_RANGE = 14,
  INVALID_TOPIC_NAME = 15,
  INVALID_TOPIC_PARAMS = 16,
  OPERATION_FAILED = 17,
  HDFS_OPERATION_FAILED = 18,
  HBASE_OPERATION_FAILED = 19,
  ZOOKEEPER_OPERATION_FAILED = 20,
  PARTITION_NOT_SERVING = 21,
  PARTITION_NOT_EXIST = 22,
  ZK_NODE_EXIST = 23,
  ZK_NODE_NOT_EXIST = 24,
  REST_SERVER_INIT_ERROR = 25,
  INTERNAL_SERVER_ERROR = 26,
  EXCESSIVE_PENDING_MESSAGE = 27,
  PERMISSION_DENIED_ERROR = 28,
  HDFS_FILE_NOT_EXIST = 29,
  INVALID_AUTH_INFO = 30,
  SUB_RESOURCE_NAME_EXIST = 31,
  SUB_RESOURCE_NAME_NOT_EXIST = 32,
  /* Talos extensions (not known to SDK 2.0.2, which maps unknown numbers to null). */
  /* A request argument is malformed or out of its allowed range (message size, counts, ids). */
  INVALID_REQUEST_PARAMS = 33,
  /* The feature exists in the protocol but this server does not offer it (yet). */
  NOT_SUPPORTED = 34,
  /* The request's deadline passed before the server could serve it. */
  REQUEST_PROCESS_TIMEOUT = 35,
  /*
   * An idempotent put's producer sequence is neither the next one expected for its producer and
   * partition nor one of the recent ones the server remembers: puts are missing in between (or
   * the put is a very old repeat). Sending it again cannot succeed.
   */
  OUT_OF_ORDER_SEQUENCE = 36,
}

exception GalaxyTalosException {
  1: optional ErrorCode errorCode,
  2: optional string errMsg,
  3: optional string details,
}

struct Version {
  1: required i32 major,
  2: required i32 minor,
  3: required i32 revision,
  4: required string date,
  5: optional string details,
}

/* Galaxy's grantee (com.xiaomi.infra.galaxy.rpc.thrift in the SDK). */
enum GrantType {
  DEVELOPER = 1,
  APP_ROOT = 2,
  APP_USER = 3,
  GUEST = 4,
}

struct Grantee {
  1: optional GrantType type,
  2: optional string identifier,
}

enum Permission {
  NONE = 0,
  PUT_MESSAGE = 1,
  GET_MESSAGE = 2,
  FULL_MESSAGE_CONTROL = 3,
  DESCRIBE_TOPIC = 4,
  PUT_MESSAGE_AND_DESCRIBE_TOPIC = 5,
  GET_MESSAGE_AND_DESCRIBE_TOPIC = 6,
  TOPIC_READ_AND_MESSAGE_FULL_CONTROL = 7,
  CHANGE_TOPIC = 8,
  FULL_TOPIC_CONTROL = 12,
  FULL_CONTROL = 15,
  CHANGE_PERMISSION = 16,
  ADMIN = 31,
}

/* ownerId#topicName#uniqueSuffix */
struct TopicTalosResourceName {
  1: required string topicTalosResourceName,
}

struct TopicAndPartition {
  1: required string topicName,
  2: required TopicTalosResourceName topicTalosResourceName,
  3: required i32 partitionId,
}

struct BaseQuota {
  1: required i64 spaceQuota,
  2: optional i64 usedSpace,
  3: optional i64 remainingSpace,
  4: optional i32 putMessageQpsQuota,
  5: optional i32 getMessageQpsQuota,
  6: optional i64 putMessageBytesQpsQuota,
  7: optional i64 getMessageBytesQpsQuota,
}

struct UserQuota {
  1: required BaseQuota baseQuota,
  2: optional i32 topicNumberQuota,
}

enum RetryType {
  SAFE = 0,
  UNSAFE = 1,
}
