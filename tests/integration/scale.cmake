# Delivery at scale: real outbox-relay processes against the test MariaDB and the fake IM server.
target_sources(room_outbox_test_support PRIVATE tests/support/child_process.cc
  tests/support/relay_process.cc tests/support/private_mariadb.cc
  tests/support/delivery_checks.cc tests/support/wait.cc
  tests/support/test_rows.cc)
target_sources(integration_tests PRIVATE tests/integration/relay_scale_test.cc
  tests/integration/chaos_test.cc tests/integration/relay_claim_test.cc)
# The tests spawn the daemon binary of this build tree.
add_dependencies(integration_tests outbox-relay)
