// ProcessRegistry<T>: the objects a process shares by key (the sync breaker of an IM app, the
// request budget of an IM app and rate, the app-budget member of a database and app). Get
// returns the live object of a key, or makes one; the registry holds its entries weakly, so the
// object lives exactly as long as its users hold it: the last user frees it, and the next Get of
// the key makes a new one. Thread-safe.
//
// Lifetime rule: an instance is a function-local static, destroyed at exit. Its users (Hooks,
// publishers) may outlive it: a global Hook destroyed after static destruction has begun frees
// its objects without touching the registry. So an object kept here must own, or hold by
// shared_ptr, everything it uses (never a reference into the registry or another static), and
// Get must not be called once static destruction has begun.
//
// RegistryKey is the one way to build a key: the parts that decide sharing, in order.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace room_outbox::core {

namespace registry_key {
void Append(std::string& key, std::string_view part);
void Append(std::string& key, uint64_t part);
void Append(std::string& key, double part);  // exact: 50 and 50.000001 are different keys
}  // namespace registry_key

// The parts joined by a separator no part contains ('\x1f'), so distinct parts give distinct
// keys.
template <typename... Parts>
std::string RegistryKey(const Parts&... parts) {
  std::string key;
  (registry_key::Append(key, parts), ...);
  return key;
}

template <typename T>
class ProcessRegistry {
 public:
  ProcessRegistry() = default;
  ProcessRegistry(const ProcessRegistry&) = delete;
  ProcessRegistry& operator=(const ProcessRegistry&) = delete;

  // The object of `key` while anyone holds it; otherwise make()'s (a std::shared_ptr<T>), kept
  // for the next callers. make runs under the registry's lock: two first callers get one object.
  template <typename Make>
  std::shared_ptr<T> Get(const std::string& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    // Drop the entries nobody holds any more: the map stays as small as the live objects.
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = it->second.expired() ? entries_.erase(it) : std::next(it);
    }
    std::weak_ptr<T>& slot = entries_[key];
    if (std::shared_ptr<T> live = slot.lock()) {
      return live;
    }
    std::shared_ptr<T> made = std::forward<Make>(make)();
    slot = made;
    return made;
  }

  // The keys whose object is alive.
  size_t live() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [key, entry] : entries_) n += entry.expired() ? 0 : 1;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::weak_ptr<T>> entries_;
};

}  // namespace room_outbox::core
