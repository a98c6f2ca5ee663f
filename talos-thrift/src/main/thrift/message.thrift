/* MessageService, wire-compatible with Talos SDK 2.0.2 (see common.thrift for the rules). */
include "common.thrift"
namespace java io.talos.thrift

enum MessageCompressionType {
  NONE = 0,
  SNAPPY = 1,
  GZIP = 2,
}

enum MessageType {
  BINARY = 1,
}

/* Special values of a requested offset. */
enum MessageOffset {
  START_OFFSET = -1,
  LATEST_OFFSET = -2,
}

/* One user message; the SDK serializes these inside a MessageBlock's payload. */
struct Message {
  1: optional string partitionKey,
  2: optional string sequenceNumber,
  3: required binary message,
  4: optional i64 createTimestamp,
  5: optional i64 appendTimestamp,
  6: optional MessageType messageType,
}

struct MessageAndOffset {
  1: required Message message,
  2: required i64 messageOffset,
  3: optional i64 unHandledMessageNumber,
}

/*
 * A compressed run of serialized messages. The server stores and returns it without decoding the
 * payload; it assigns startMessageOffset and appendTimestamp.
 */
struct MessageBlock {
  1: required i64 startMessageOffset,
  2: required i32 messageNumber,
  3: required MessageCompressionType compressionType,
  4: required binary messageBlock,
  5: optional i32 messageBlockSize,
  6: optional i64 appendTimestamp,
  7: optional i64 createTimestamp,
}

/* Kept for wire completeness with the SDK; this server's index is its own (see docs). */
struct MessageIndex {
  1: required common.TopicAndPartition topicAndPartition,
  2: required i64 messageOffset,
  3: required i64 hdfsLogFileOffset,
  4: required i32 messageNumber,
}

struct OffsetInfo {
  1: required i32 partitionId,
  2: optional i64 startOffset,
  3: optional i64 endOffset,
  4: optional common.ErrorCode errorCode,
  5: optional string errorMsg,
}

struct PutMessageRequest {
  1: required common.TopicAndPartition topicAndPartition,
  2: required list<MessageBlock> messageBlocks,
  3: required i32 messageNumber,
  /* clientId#sequence */
  4: required string sequenceId,
  /* Extension: the client's deadline, epoch ms. Absent from SDK 2.0.2 requests. */
  5: optional i64 timeoutTimestamp,
  /*
   * Extension, idempotent produce: the id initProducerId handed out. With producerSequence set,
   * the server stores the put at most once: a repeat of a put it already stored is answered with
   * the offsets of the first time, nothing is written. Absent from SDK 2.0.2 requests.
   */
  6: optional i64 producerId,
  /* Extension: the put's number among this producer's puts to this partition: 0, 1, 2, ... */
  7: optional i32 producerSequence,
}

struct PutMessageResponse {
  1: required string sequenceId,
  /* Extension: the offset assigned to the first message of the request. */
  2: optional i64 startMessageOffset,
  /* Extension: true when the put was a repeat of a stored one; the offsets are the stored ones. */
  3: optional bool duplicate,
}

/* Extension (idempotent produce): asks for a producer id. */
struct InitProducerIdRequest {
  /* informational, for the server's log */
  1: optional string clientId,
}

struct InitProducerIdResponse {
  /* positive, unique to this producer; used in PutMessageRequest.producerId */
  1: required i64 producerId,
}

struct GetMessageRequest {
  1: required common.TopicAndPartition topicAndPartition,
  3: required i64 messageOffset,
  4: optional i32 maxGetMessageNumber,
  5: optional i32 maxGetMessageBytes,
  6: optional bool showUnHandledMessageNumber,
  7: required string sequenceId,
  /* Extension: the client's deadline, epoch ms. Absent from SDK 2.0.2 requests. */
  8: optional i64 timeoutTimestamp,
  /*
   * Extension (long poll): when messageOffset is the partition's next offset (nothing to read
   * yet), the server may hold the answer up to this many ms until a message arrives. Absent or 0:
   * answer at once, as for SDK 2.0.2 requests.
   */
  9: optional i32 maxWaitMs,
}

struct GetMessageResponse {
  1: required list<MessageBlock> messageBlocks,
  2: required i32 messageNumber,
  3: optional i64 unHandledMessageNumber,
  4: required string sequenceId,
  /*
   * Extension: set (to the ms the answer was held, possibly 0) when the server honoured the
   * request's maxWaitMs; absent from servers without long poll, whose empty answers come at once.
   */
  5: optional i64 waitedMs,
}

/*
 * Extension: the offset of the first message of a partition appended at or after a time.
 */
struct GetOffsetForTimestampRequest {
  1: required common.TopicAndPartition topicAndPartition,
  /* epoch ms, compared with the messages' append timestamps (the server's clock) */
  2: required i64 timestamp,
}

struct GetOffsetForTimestampResponse {
  /*
   * The first message appended at or after the timestamp; the partition's next offset when every
   * retained message is older; its start offset when the timestamp precedes all of them.
   */
  1: required i64 messageOffset,
}

struct GetTopicOffsetRequest {
  1: required common.TopicTalosResourceName topicTalosResourceName,
}

struct GetTopicOffsetResponse {
  1: required list<OffsetInfo> offsetInfoList,
}

struct GetPartitionOffsetRequest {
  1: required common.TopicAndPartition topicAndPartition,
}

struct GetPartitionOffsetResponse {
  1: required OffsetInfo offsetInfo,
}

struct GetPartitionsOffsetRequest {
  1: required list<common.TopicAndPartition> topicAndPartitionList,
}

struct GetPartitionsOffsetResponse {
  1: required list<OffsetInfo> offsetInfoList,
}
