#include "daemon/node_lock_start.h"

#include "daemon/lifecycle_log.h"

namespace room_outbox::relay {
namespace {

LogLine TakenLine(const char* message, const Config& config, const NodeLock& lock,
                  const NodeLockHold& held) {
  LogLine line = Lifecycle(message, config);
  line.Add("lock", lock.name())
      .Add("connection_id", held.connection_id)
      .Add("released", held.released);
  return line;
}

}  // namespace

core::Result<LockedStores> LockNode(const Config& config, RelayStore& store, RelayStore* ahead,
                                    Logger& logger) {
  LockedStores locked;
  locked.lock = std::make_unique<NodeLock>(config.mysql, config.node_id);
  NodeLock& lock = *locked.lock;
  auto held = lock.Hold();
  if (held) {
    logger.Info(TakenLine("node lock taken; leases of earlier runs of this node_id given back",
                          config, lock, *held));
  } else if (held.error().code == ErrorCode::kAlreadyExists) {
    logger.Error(Lifecycle("refused: node_id in use", config)
                     .Add("lock", lock.name())
                     .Add("error", held.error().message));
    return core::Fail(held.error());
  } else {
    logger.Warn(Lifecycle("cannot take the node lock now; the first claim takes it", config)
                    .Add("lock", lock.name())
                    .Add("error", held.error().message));
  }
  // Taken after the start's: at the first claim or beat after a failed start, or again after the
  // lock's connection was lost (a database restart).
  locked.on_taken = [&config, &logger, &lock](const NodeLockHold& taken) {
    logger.Warn(TakenLine(
        "node lock taken after start; leases of other runs of this node_id given back", config,
        lock, taken));
  };
  locked.store = std::make_unique<NodeLockedStore>(store, lock, locked.on_taken);
  if (ahead != nullptr) {
    locked.ahead = std::make_unique<NodeLockedStore>(*ahead, lock, locked.on_taken);
  }
  return locked;
}

}  // namespace room_outbox::relay
