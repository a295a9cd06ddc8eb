#pragma once
// TCP sequence numbers: 32-bit values compared modulo 2^32 (RFC 9293 3.4).
// Raw uint32_t sequence numbers are never compared directly: `a < b` on
// seq32 means "a comes before b" in the wrapping sense, which holds as long
// as the two are less than 2^31 apart (the window bounds guarantee it).

#include <compare>
#include <cstdint>

namespace affine::stack {

class seq32 {
 public:
  constexpr seq32() = default;
  constexpr explicit seq32(std::uint32_t v) : v_(v) {}

  constexpr std::uint32_t raw() const { return v_; }

  friend constexpr seq32 operator+(seq32 s, std::uint32_t n) { return seq32(s.v_ + n); }
  friend constexpr seq32 operator-(seq32 s, std::uint32_t n) { return seq32(s.v_ - n); }
  constexpr seq32& operator+=(std::uint32_t n) { v_ += n; return *this; }
  constexpr seq32& operator-=(std::uint32_t n) { v_ -= n; return *this; }
  // The signed distance from b to a: positive when a is after b.
  friend constexpr std::int32_t operator-(seq32 a, seq32 b) { return std::int32_t(a.v_ - b.v_); }

  friend constexpr bool operator==(seq32, seq32) = default;
  friend constexpr std::strong_ordering operator<=>(seq32 a, seq32 b) {
    return (a - b) <=> 0;
  }

 private:
  std::uint32_t v_ = 0;
};

// RFC 9293 3.4: "a <= b < c" in sequence space.
constexpr bool seq_in_window(seq32 b, seq32 a, seq32 c) { return a <= b && b < c; }
constexpr seq32 seq_max(seq32 a, seq32 b) { return a < b ? b : a; }
constexpr seq32 seq_min(seq32 a, seq32 b) { return a < b ? a : b; }

}  // namespace affine::stack
