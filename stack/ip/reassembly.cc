#include "stack/ip/reassembly.hh"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "stack/flow.hh"

namespace affine::stack {

std::string_view to_string(reassembly_drop reason) {
  switch (reason) {
    case reassembly_drop::bad_length: return "bad_length";
    case reassembly_drop::too_big: return "too_big";
    case reassembly_drop::no_slot: return "no_slot";
    case reassembly_drop::duplicate: return "duplicate";
    case reassembly_drop::overlap: return "overlap";
    case reassembly_drop::end_mismatch: return "end_mismatch";
    case reassembly_drop::too_many_holes: return "too_many_holes";
    case reassembly_drop::memory_cap: return "memory_cap";
    case reassembly_drop::timeout: return "timeout";
  }
  return "unknown";
}

reassembly::reassembly(const reassembly_config& config)
    : config_(config),
      slots_(config.slots),
      holes_(std::size_t(config.slots) * config.max_holes),
      arena_(new std::byte[std::size_t(config.slots) * (max_first_headers + max_payload)]) {
  assert(config.slots > 0 && config.max_holes > 0);
}

reassembly_result reassembly::add(const fragment_key& key, std::uint32_t offset_bytes, bool more_fragments,
                                  std::span<const std::byte> payload, std::uint64_t now_ns,
                                  std::span<const std::byte> headers) {
  if (complete_ != none) release(complete_);
  // RFC 791 3.1: offsets count 8-octet blocks, so every fragment but the
  // last carries a multiple of 8 bytes. An empty fragment adds nothing.
  if (payload.empty() || offset_bytes % 8 != 0 || (more_fragments && payload.size() % 8 != 0))
    return drop(reassembly_drop::bad_length);
  if (std::uint64_t(offset_bytes) + payload.size() > max_payload) return drop(reassembly_drop::too_big);
  const auto len = std::uint32_t(payload.size());
  const std::uint32_t end = offset_bytes + len;

  std::uint32_t s = find(key);
  if (s != none && slots_[s].deadline <= now_ns) {
    drop_datagram(s, reassembly_drop::timeout);  // expire() has not run yet; this fragment starts afresh
    s = none;
  }
  if (s == none) s = open(key, now_ns);
  if (s == none) return drop(reassembly_drop::no_slot);
  slot& d = slots_[s];

  // RFC 791 3.2: the last fragment (MF clear) sets the length. Another last
  // fragment must agree, and no data may lie past it.
  if (more_fragments ? end > d.end : ((d.end != unbounded && d.end != end) || d.max_end > end))
    return drop_datagram(s, reassembly_drop::end_mismatch);

  // RFC 815: a new fragment must fill part of exactly one hole.
  hole* const base = holes_of(s);
  const std::span<hole> holes{base, d.holes};
  const auto h = std::find_if(holes.begin(), holes.end(),
                              [&](const hole& x) { return x.first <= offset_bytes && end <= x.last; });
  if (h == holes.end()) {
    const bool touches_hole =
        std::any_of(holes.begin(), holes.end(), [&](const hole& x) { return x.first < end && offset_bytes < x.last; });
    if (touches_hole) return drop_datagram(s, reassembly_drop::overlap);
    return drop(reassembly_drop::duplicate);
  }
  // RFC 815 steps 5 and 6: what is left of the hole before and after the
  // fragment; nothing after the last fragment.
  const hole before{h->first, offset_bytes};
  const hole after{end, more_fragments ? h->last : end};
  const std::uint32_t holes_after = d.holes - 1 + (before.first < before.last) + (after.first < after.last);
  if (holes_after > config_.max_holes) return drop_datagram(s, reassembly_drop::too_many_holes);
  if (std::uint64_t(held_) + len > config_.memory_cap) return drop_datagram(s, reassembly_drop::memory_cap);

  *h = base[--d.holes];
  for (const hole& x : {before, after})
    if (x.first < x.last) base[d.holes++] = x;
  std::memcpy(buffer_of(s) + offset_bytes, payload.data(), len);
  if (offset_bytes == 0 && headers.size() <= max_first_headers) {
    if (!headers.empty()) std::memcpy(buffer_of(s) - headers.size(), headers.data(), headers.size());
    d.first_headers = std::uint32_t(headers.size());
    d.first_len = len;
  }
  d.held += len;
  held_ += len;
  d.max_end = std::max(d.max_end, end);
  if (!more_fragments) d.end = end;
  ++counts_.fragments;

  // RFC 815: no holes left and the end known: the datagram is whole.
  if (d.end == unbounded || d.holes > 0) return {};
  d.st = state::complete;
  complete_ = s;
  ++counts_.completed;
  return {.status = reassembly_status::complete, .slot = s, .payload = {buffer_of(s), d.end},
          .first_fragment = first_fragment_of(s)};
}

std::span<const std::byte> reassembly::first_fragment_of(std::uint32_t s) {
  const slot& d = slots_[s];
  if (d.first_len == 0) return {};
  return {buffer_of(s) - d.first_headers, d.first_headers + d.first_len};
}

void reassembly::release(std::uint32_t s) {
  assert(s < slots_.size() && slots_[s].st == state::complete);
  free_slot(s);
  if (complete_ == s) complete_ = none;
}

std::uint32_t reassembly::expire(std::uint64_t now_ns, const expired_fn& first_fragment) {
  std::uint32_t n = 0;
  for (std::uint32_t s = 0; s < slots_.size(); ++s) {
    const slot& d = slots_[s];
    if (d.st == state::open && d.deadline <= now_ns) {
      if (const auto first = first_fragment_of(s); first_fragment && !first.empty()) first_fragment(d.key, first);
      drop_datagram(s, reassembly_drop::timeout);
      ++n;
    }
  }
  return n;
}

std::uint64_t reassembly::next_deadline() const {
  std::uint64_t t = no_deadline;
  for (const slot& d : slots_)
    if (d.st == state::open) t = std::min(t, d.deadline);
  return t;
}

std::uint32_t reassembly::in_progress() const {
  return std::uint32_t(std::count_if(slots_.begin(), slots_.end(), [](const slot& d) { return d.st == state::open; }));
}

std::uint32_t reassembly::find(const fragment_key& key) const {
  for (std::uint32_t s = 0; s < slots_.size(); ++s)
    if (slots_[s].st == state::open && slots_[s].key == key) return s;
  return none;
}

std::uint32_t reassembly::open(const fragment_key& key, std::uint64_t now_ns) {
  for (std::uint32_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s].st != state::free) continue;
    // RFC 815: at first the whole datagram is one hole, from 0 to infinity.
    const bool v6 = !is_v4(key.src);
    slots_[s] = {.st = state::open, .key = key,
                 .deadline = now_ns + (v6 ? config_.ipv6_timeout_ns : config_.timeout_ns), .holes = 1};
    *holes_of(s) = {0, unbounded};
    return s;
  }
  return none;
}

reassembly::hole* reassembly::holes_of(std::uint32_t s) { return holes_.data() + std::size_t(s) * config_.max_holes; }

void reassembly::free_slot(std::uint32_t s) {
  held_ -= slots_[s].held;
  slots_[s] = {};
}

// Every drop passes here (the datagram's drops through drop_datagram),
// counted by its reason.
reassembly_result reassembly::drop(reassembly_drop reason) {
  ++counts_.dropped[std::size_t(reason)];
  return {.status = reassembly_status::dropped, .reason = reason};
}

reassembly_result reassembly::drop_datagram(std::uint32_t s, reassembly_drop reason) {
  free_slot(s);
  return drop(reason);
}

}  // namespace affine::stack
