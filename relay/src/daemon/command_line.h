// The outbox-relay command line, defined once: the daemon's options and the operator
// subcommands with theirs. main() parses with it, and the man page test walks the same app, so
// outbox-relay(8) cannot lose an option that --help shows (tests/unit/man_page_test.cc).
#pragma once

#include <memory>

namespace CLI {
class App;
}  // namespace CLI

namespace room_outbox::relay {

struct CliOptions;
namespace ops {
struct OpsCli;
}  // namespace ops
namespace migrate {
struct MigrateCli;
}  // namespace migrate

// The app with every option and subcommand bound to `cli`, `ops` and `migrate`, which must
// outlive it. After a successful parse, `ops.command` names the subcommand given ("migrate" or
// an operator command; empty: run the relay as `cli` says).
std::unique_ptr<CLI::App> MakeCommandLine(CliOptions& cli, ops::OpsCli& ops,
                                          migrate::MigrateCli& migrate);

}  // namespace room_outbox::relay
