// A hash map from strings to values in one array (open addressing, linear
// probing): a lookup reads one slot, where std::unordered_map follows two
// or three pointers. With a million node names those cache misses were
// most of a graph's build time. Keys are never erased (names are never
// released).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tfrun {

template <typename V>
class FlatStringMap {
 public:
  // The value of `key`, or null.
  const V* Find(std::string_view key) const {
    if (slots_.empty()) return nullptr;
    const uint64_t hash = Hash(key);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.key == 0) return nullptr;
      if (slot.hash == hash && keys_[slot.key - 1] == key) return &slot.value;
    }
  }
  V* Find(std::string_view key) { return const_cast<V*>(std::as_const(*this).Find(key)); }
  bool Contains(std::string_view key) const { return Find(key) != nullptr; }

  // The value of `key`, inserted as V() when absent. The reference holds
  // until the next insertion.
  V& operator[](std::string_view key) {
    if (2 * (keys_.size() + 1) > slots_.size()) Grow(2 * (keys_.size() + 1));
    const uint64_t hash = Hash(key);
    size_t i = hash & mask_;
    for (; slots_[i].key != 0; i = (i + 1) & mask_) {
      if (slots_[i].hash == hash && keys_[slots_[i].key - 1] == key) return slots_[i].value;
    }
    keys_.emplace_back(key);
    slots_[i] = Slot{hash, static_cast<uint32_t>(keys_.size()), V()};
    return slots_[i].value;
  }

  size_t size() const { return keys_.size(); }

  // Room for `n` keys without growing.
  void Reserve(size_t n) {
    keys_.reserve(n);
    if (2 * n > slots_.size()) Grow(2 * n);
  }

 private:
  // 16 bytes for an int value; the key's text is in keys_.
  struct Slot {
    uint64_t hash = 0;
    uint32_t key = 0;  // 1 + index into keys_; 0: empty
    V value{};
  };

  static uint64_t Hash(std::string_view key) { return std::hash<std::string_view>()(key); }

  // At least `min_slots` slots, a power of two: the table stays at most
  // half full, so probes are short.
  void Grow(size_t min_slots) {
    size_t n = 16;
    while (n < min_slots) n *= 2;
    std::vector<Slot> old(n);
    old.swap(slots_);
    mask_ = n - 1;
    for (const Slot& slot : old) {
      if (slot.key == 0) continue;
      size_t i = slot.hash & mask_;
      while (slots_[i].key != 0) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  std::vector<std::string> keys_;
  size_t mask_ = 0;
};

}  // namespace tfrun
