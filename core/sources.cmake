# room_outbox_core: what the hook and the relay both use (see core/README.md).
add_library(room_outbox_core STATIC
  core/claim_token.cc
  core/clock.cc
  core/envelope_codec.cc
  core/error.cc
  core/publish_stream.cc
  core/host_name.cc
  core/input_limits.cc
  core/json_writer.cc
  core/process_registry.cc
  core/prometheus_text.cc
  core/c_libraries.cc
  core/vocabulary.cc
  core/sorted_json.cc
  core/envelope_events.cc
  core/app_budget/app_budget_member.cc
  core/app_budget/member_store.cc
  core/app_budget/share_split.cc
  core/app_budget/start_member.cc
  core/utf8.cc
  core/wake_path.cc
  core/wipe.cc
  core/config/duration.cc
  core/config/secret_file.cc
  core/config/secrets.cc
  core/config/shared_config.cc
  core/config/toml_reader.cc
  core/mysql/connect_options.cc
  core/mysql/connection.cc
  core/mysql/dialect.cc
  core/mysql/id_lists.cc
  core/mysql/mysql_error.cc
  core/mysql/statement.cc
  core/mysql/statement_count.cc
  core/mysql/statement_text.cc
  core/mysql/store_session.cc
  core/tencent/curl_error.cc
  core/tencent/im_breaker.cc
  core/tencent/im_endpoint.cc
  core/tencent/im_request.cc
  core/tencent/im_answer.cc
  core/tencent/im_response.cc
  core/tencent/process_rate_budget.cc
  core/tencent/publish_admission.cc
  core/tencent/publish_completion.cc
  core/tencent/rate_budget.cc
  core/tencent/tencent_im_publisher.cc
  core/tencent/im_publisher.cc
  core/tencent/im_publisher_stream.cc
  core/tencent/transfer_pool.cc
  core/tencent/usersig.cc)
# The include roots (cmake/include_roots.cmake): core's sources and its consumers include core
# headers as "core/...", through a root that holds core and nothing else. Core may include the
# public vocabulary headers (room_outbox/error.h, options.h, envelope.h, export.h), never the hook's
# API (room_outbox/hook.h, c.h): the fence root, searched first, makes those an #error here.
target_include_directories(room_outbox_core
  PRIVATE ${ROOM_OUTBOX_CORE_FENCE_ROOT}
  PUBLIC $<BUILD_INTERFACE:${ROOM_OUTBOX_CORE_ROOT}>
         $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/hook/include>)
target_link_libraries(room_outbox_core
  PUBLIC PkgConfig::MARIADB CURL::libcurl OpenSSL::Crypto ZLIB::ZLIB nlohmann_json::nlohmann_json
         tl::expected tomlplusplus::tomlplusplus Threads::Threads
  PRIVATE room_outbox_build_settings)
