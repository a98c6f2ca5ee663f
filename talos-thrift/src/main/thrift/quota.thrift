/* QuotaService, wire-compatible with Talos SDK 2.0.2 (see common.thrift for the rules). */
include "common.thrift"
namespace java io.talos.thrift

struct SetUserQuotaRequest {
  1: required string developerId,
  2: required common.UserQuota userQuota,
}

struct ListUserQuotaResponse {
  1: required map<string, common.UserQuota> userQuotaList,
}

struct QueryUserQuotaResponse {
  1: required common.UserQuota userQuota,
}

struct DeleteUserQuotaRequest {
  1: required string developerId,
}
