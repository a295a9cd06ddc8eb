#include "stack/tcp/assembler.hh"

#include <algorithm>
#include <limits>

namespace affine::stack::tcp {

assembler::assembler(std::size_t max_ranges)
    : ranges_(std::make_unique<range[]>(max_ranges)), max_ranges_(max_ranges) {}

void assembler::erase(std::size_t first, std::size_t count) {
  std::copy(ranges_.get() + first + count, ranges_.get() + count_, ranges_.get() + first);
  count_ -= count;
}

assembler::add_result assembler::add(std::size_t offset, std::size_t len) {
  len = std::min(len, std::numeric_limits<std::size_t>::max() - offset);
  if (len == 0) return add_result::duplicate;
  std::size_t begin = offset;
  std::size_t end = offset + len;
  range* const r = ranges_.get();
  // The ranges that overlap or touch [begin, end): [first, last).
  std::size_t first = 0;
  while (first < count_ && r[first].first + r[first].second < begin) ++first;
  std::size_t last = first;
  while (last < count_ && r[last].first <= end) ++last;
  if (last - first == 1 && r[first].first <= begin && end <= r[first].first + r[first].second)
    return add_result::duplicate;
  if (first == last) {
    // A new disjoint range, inserted at `first`.
    if (count_ == max_ranges_) return add_result::too_many_ranges;
    std::copy_backward(r + first, r + count_, r + count_ + 1);
    ++count_;
  } else {
    begin = std::min(begin, r[first].first);
    end = std::max(end, r[last - 1].first + r[last - 1].second);
    erase(first + 1, last - first - 1);
  }
  r[first] = {begin, end - begin};
  return add_result::added;
}

std::size_t assembler::take_front() {
  if (count_ == 0 || ranges_[0].first != 0) return 0;
  const std::size_t n = ranges_[0].second;
  erase(0, 1);
  for (range& x : live()) x.first -= n;
  return n;
}

void assembler::advance(std::size_t n) {
  std::size_t gone = 0;
  while (gone < count_ && ranges_[gone].first + ranges_[gone].second <= n) ++gone;
  erase(0, gone);
  for (range& x : live()) {
    const std::size_t cut = std::min(x.first, n);
    x.second -= n - cut;
    x.first = cut == n ? x.first - n : 0;
  }
}

}  // namespace affine::stack::tcp
