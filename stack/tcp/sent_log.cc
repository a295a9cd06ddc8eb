#include "stack/tcp/sent_log.hh"

#include <algorithm>

namespace affine::stack::tcp {

std::size_t sent_log::first_ending_after(seq32 s) const {
  std::size_t lo = 0;
  std::size_t hi = count_;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if ((*this)[mid].end <= s) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

bool sent_log::append(seq32 begin, seq32 end, std::uint64_t now_ns) {
  if (count_ == capacity_ && capacity_ < max_) grow();
  if (count_ == capacity_ || count_ == max_) {
    sent_record& last = back();
    last.end = end;
    last.xmit_ns = now_ns;
    return false;
  }
  ++count_;
  back() = sent_record{.begin = begin, .end = end, .xmit_ns = now_ns};
  return true;
}

void sent_log::grow() {
  const std::size_t capacity = std::max<std::size_t>(16, capacity_ * 2);
  auto slots = std::make_unique<sent_record[]>(capacity);
  for (std::size_t i = 0; i < count_; ++i) slots[i] = (*this)[i];
  slots_ = std::move(slots);
  capacity_ = capacity;
  head_ = 0;
}

}  // namespace affine::stack::tcp
