// What the man pages (docs/outbox-relay.8.adoc, docs/outbox-relay.toml.5.adoc) and the code
// disagree on. Each function returns one line per difference, naming the option, command, key
// or value; empty when the page and the code agree.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace room_outbox::testing {

// Every option (long, short and positional names) and subcommand of `app`, against the page's
// OPTIONS and COMMANDS sections, both ways; an option that shows a default in --help must say
// "Default: VALUE" (VALUE may be in backticks) in its description.
std::vector<std::string> CommandLineDrift(const CLI::App& app, const std::string& page);

// The EXIT STATUS section lists exactly `codes`.
std::vector<std::string> ExitStatusDrift(const std::vector<int>& codes, const std::string& page);

// The CONFIGURATION summary of outbox-relay(8) names exactly `keys` (relay::ConfigKeys()).
std::vector<std::string> ConfigSummaryDrift(const std::vector<std::string>& keys,
                                            const std::string& page);

// The KEYS section of outbox-relay.toml(5) documents exactly `keys`, each with the default that
// `defaults` (the effective config of an empty file, RenderEffectiveConfig) shows for it. Keys
// in `computed` (e.g. node_id: the host name) describe their default in words instead.
std::vector<std::string> ConfigPageDrift(const std::vector<std::string>& keys,
                                         const std::string& defaults,
                                         const std::vector<std::string>& computed,
                                         const std::string& page);

}  // namespace room_outbox::testing
