#include "core/mysql/statement_count.h"

#include <atomic>

namespace room_outbox::core {
namespace {

// Constant-initialised and trivially destructible: safe from any thread at any time, also
// during static initialisation and destruction.
std::atomic<uint64_t> statements_sent{0};

}  // namespace

uint64_t StatementsSent() { return statements_sent.load(std::memory_order_relaxed); }

void CountStatementSent() { statements_sent.fetch_add(1, std::memory_order_relaxed); }

}  // namespace room_outbox::core
