# Tencent IM publisher (libcurl), UserSig, and the fake IM server used by tests, demo and bench.
target_sources(room_outbox_hook PRIVATE
  hook/src/tencent/curl_error.cc
  hook/src/tencent/im_request.cc
  hook/src/tencent/im_response.cc
  hook/src/tencent/rate_budget.cc
  hook/src/tencent/tencent_im_publisher.cc
  hook/src/tencent/usersig.cc)
