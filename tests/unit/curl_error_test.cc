#include "core/tencent/curl_error.h"

#include <gtest/gtest.h>

namespace room_outbox {
namespace {

TEST(CurlErrorTest, MapsCodesToRetrySemantics) {
  struct Case {
    CURLcode code;
    ErrorCode expected;
  };
  const Case cases[] = {
      {CURLE_COULDNT_CONNECT, ErrorCode::kUnavailable},
      {CURLE_COULDNT_RESOLVE_HOST, ErrorCode::kUnavailable},
      {CURLE_SEND_ERROR, ErrorCode::kUnavailable},
      {CURLE_RECV_ERROR, ErrorCode::kUnavailable},
      {CURLE_GOT_NOTHING, ErrorCode::kUnavailable},
      {CURLE_SSL_CONNECT_ERROR, ErrorCode::kUnavailable},
      {CURLE_OPERATION_TIMEDOUT, ErrorCode::kDeadlineExceeded},
      {CURLE_PEER_FAILED_VERIFICATION, ErrorCode::kPermissionDenied},
      {CURLE_SSL_CACERT_BADFILE, ErrorCode::kPermissionDenied},
      {CURLE_URL_MALFORMAT, ErrorCode::kInvalidArgument},
      {CURLE_UNSUPPORTED_PROTOCOL, ErrorCode::kInvalidArgument},
      {CURLE_UNKNOWN_OPTION, ErrorCode::kInvalidArgument},
      {CURLE_OUT_OF_MEMORY, ErrorCode::kInternal},
      {CURLE_WRITE_ERROR, ErrorCode::kInternal},
  };
  for (const auto& c : cases) {
    Error e = core::FromCurlCode(c.code, "op");
    EXPECT_EQ(e.code, c.expected) << "curl code " << c.code << ": " << e.message;
  }
  EXPECT_TRUE(IsRetryable(core::FromCurlCode(CURLE_COULDNT_CONNECT, "op")));
  EXPECT_TRUE(IsRetryable(core::FromCurlCode(CURLE_OPERATION_TIMEDOUT, "op")));
  EXPECT_FALSE(IsRetryable(core::FromCurlCode(CURLE_PEER_FAILED_VERIFICATION, "op")));
}

TEST(CurlErrorTest, MessageNamesOperationTargetAndCurlText) {
  Error e = core::FromCurlCode(CURLE_COULDNT_CONNECT, "curl_easy_perform(POST 127.0.0.1:8080)");
  EXPECT_EQ(e.message, "curl_easy_perform(POST 127.0.0.1:8080): Couldn't connect to server [7]");
  Error with_detail = core::FromCurlCode(CURLE_COULDNT_CONNECT, "op", "Connection refused");
  EXPECT_EQ(with_detail.message, "op: Couldn't connect to server [7]: Connection refused");
}

TEST(CurlErrorTest, MultiAndUrlCodesCarryTheirText) {
  Error multi = core::FromCurlMultiCode(CURLM_BAD_HANDLE, "curl_multi_perform");
  EXPECT_EQ(multi.code, ErrorCode::kInternal);
  EXPECT_EQ(multi.message.rfind("curl_multi_perform: ", 0), 0u) << multi.message;
  EXPECT_NE(multi.message.find("[1]"), std::string::npos) << multi.message;
  Error url = core::FromCurlUrlCode(CURLUE_MALFORMED_INPUT, "curl_url_set");
  EXPECT_EQ(url.code, ErrorCode::kInvalidArgument);
}

TEST(CurlErrorTest, RedactDetailCutsQueryAndNewlines) {
  EXPECT_EQ(core::RedactCurlDetail("Failed to connect to 127.0.0.1 port 1: Connection refused\n"),
            "Failed to connect to 127.0.0.1 port 1: Connection refused");
  EXPECT_EQ(core::RedactCurlDetail("bad URL http://h/p?usersig=eJyrSECRET&x=1 here"),
            "bad URL http://h/p?<redacted> here");
  EXPECT_LE(core::RedactCurlDetail(std::string(1000, 'a')).size(), 160u);
}

TEST(CurlErrorTest, SetOptionReportsTheRejectedOption) {
  CURL* handle = curl_easy_init();
  ASSERT_NE(handle, nullptr);
  auto ok = core::SetOption(handle, CURLOPT_TIMEOUT_MS, 100L, "CURLOPT_TIMEOUT_MS");
  EXPECT_TRUE(ok);
  auto bad =
      core::SetOption(handle, CURLOPT_PROTOCOLS_STR, "no-such-protocol", "CURLOPT_PROTOCOLS_STR");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("curl_easy_setopt(CURLOPT_PROTOCOLS_STR)"),
            std::string::npos)
      << bad.error().message;
  curl_easy_cleanup(handle);
}

}  // namespace
}  // namespace room_outbox
