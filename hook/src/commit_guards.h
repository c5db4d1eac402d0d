// Scope guards of a Commit (hook_impl.cc): what it took before COMMIT and gives back unless the
// sync publish used it.
#pragma once

#include "background_publisher.h"
#include "core/tencent/im_breaker.h"

namespace room_outbox::internal {

// Gives a probe admission back unless its sync publish recorded a verdict.
class ProbeGuard {
 public:
  ProbeGuard(core::ImBreaker& breaker, bool armed) : breaker_(breaker), armed_(armed) {}
  ~ProbeGuard() {
    if (armed_) breaker_.CancelProbe();
  }
  ProbeGuard(const ProbeGuard&) = delete;
  ProbeGuard& operator=(const ProbeGuard&) = delete;
  void Disarm() { armed_ = false; }

 private:
  core::ImBreaker& breaker_;
  bool armed_;
};

// Gives a reserved background queue slot back unless the command was offered.
class QueueSlot {
 public:
  QueueSlot(BackgroundPublisher* background, bool reserved)
      : background_(reserved ? background : nullptr) {}
  ~QueueSlot() {
    if (background_ != nullptr) background_->Unreserve();
  }
  QueueSlot(const QueueSlot&) = delete;
  QueueSlot& operator=(const QueueSlot&) = delete;
  void Taken() { background_ = nullptr; }

 private:
  BackgroundPublisher* background_;
};

}  // namespace room_outbox::internal
