# Hook core: errors, clock, envelope codec, the Hook itself.
target_sources(room_outbox_hook PRIVATE
  hook/src/error.cc
  hook/src/clock.cc
  hook/src/envelope_codec.cc
  hook/src/input_limits.cc
  hook/src/claim_token.cc
  hook/src/commit_checks.cc
  hook/src/claim_plan.cc
  hook/src/sync_breaker.cc
  hook/src/wake_sender.cc
  hook/src/sync_hand_back.cc
  hook/src/sync_publish_mode.cc
  hook/src/background_publisher.cc
  hook/src/hook_impl.cc
  hook/src/create_hook.cc)
