# room_outbox_core: what the hook and the relay both use (see hook/src/core/README.md).
add_library(room_outbox_core STATIC
  hook/src/core/claim_token.cc
  hook/src/core/clock.cc
  hook/src/core/envelope_codec.cc
  hook/src/core/error.cc
  hook/src/core/host_name.cc
  hook/src/core/input_limits.cc
  hook/src/core/json_writer.cc
  hook/src/core/library_init.cc
  hook/src/core/sorted_json.cc
  hook/src/core/envelope_events.cc
  hook/src/core/app_budget/app_budget_member.cc
  hook/src/core/app_budget/member_store.cc
  hook/src/core/app_budget/share_split.cc
  hook/src/core/sync_publish_mode.cc
  hook/src/core/utf8.cc
  hook/src/core/wake_path.cc
  hook/src/core/config/duration.cc
  hook/src/core/config/secrets.cc
  hook/src/core/config/shared_config.cc
  hook/src/core/config/toml_reader.cc
  hook/src/core/mysql/connect_options.cc
  hook/src/core/mysql/connection.cc
  hook/src/core/mysql/dialect.cc
  hook/src/core/mysql/id_lists.cc
  hook/src/core/mysql/mysql_error.cc
  hook/src/core/mysql/mysql_option_names.cc
  hook/src/core/mysql/statement.cc
  hook/src/core/mysql/statement_count.cc
  hook/src/core/mysql/statement_text.cc
  hook/src/core/mysql/store_session.cc
  hook/src/core/tencent/curl_error.cc
  hook/src/core/tencent/im_breaker.cc
  hook/src/core/tencent/im_endpoint.cc
  hook/src/core/tencent/im_request.cc
  hook/src/core/tencent/im_answer.cc
  hook/src/core/tencent/im_response.cc
  hook/src/core/tencent/process_rate_budget.cc
  hook/src/core/tencent/publish_admission.cc
  hook/src/core/tencent/publish_completion.cc
  hook/src/core/tencent/rate_budget.cc
  hook/src/core/tencent/tencent_im_publisher.cc
  hook/src/core/tencent/transfer_pool.cc
  hook/src/core/tencent/usersig.cc)
# In-tree consumers (the hook, the relay, tests) include core headers as "core/..." and get the C
# libraries those headers include.
target_include_directories(room_outbox_core
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/hook/include>
         $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/hook/src>)
target_link_libraries(room_outbox_core
  PUBLIC PkgConfig::MARIADB CURL::libcurl OpenSSL::Crypto ZLIB::ZLIB nlohmann_json::nlohmann_json
         tl::expected tomlplusplus::tomlplusplus Threads::Threads
  PRIVATE room_outbox_build_settings)
