target_sources(room_outbox_relay PRIVATE relay/src/build_info.cc)
