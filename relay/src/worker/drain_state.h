// DrainState: what one --once run (OutboxWorker::Drain) has done so far: the rows it attempted
// (each is tried at most once per run) and the rows it gave back without ever attempting them
// (left unattempted: the run is then not ok).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_set>

namespace room_outbox::relay {

class DrainState {
 public:
  bool Attempted(int64_t id) const { return attempted_.count(id) != 0; }
  void NoteAttempted(int64_t id) {
    attempted_.insert(id);
    unattempted_.erase(id);
  }
  // A row given back unattempted; it stops counting once a later round attempts it.
  void NoteReleased(int64_t id) {
    if (!Attempted(id)) unattempted_.insert(id);
  }
  size_t attempted() const { return attempted_.size(); }
  size_t unattempted() const { return unattempted_.size(); }

 private:
  std::unordered_set<int64_t> attempted_;
  std::unordered_set<int64_t> unattempted_;
};

}  // namespace room_outbox::relay
