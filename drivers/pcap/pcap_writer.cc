#include "drivers/pcap/pcap_writer.hh"

#include <rte_mbuf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace affine::drivers {

namespace {

// https://wiki.wireshark.org/Development/LibpcapFileFormat: the magic number
// is written in host order; a reader that sees it swapped swaps every field.
constexpr std::uint32_t magic_micro = 0xa1b2c3d4;
constexpr std::uint32_t magic_nano = 0xa1b23c4d;
constexpr std::uint32_t linktype_ethernet = 1;

struct file_header {
  std::uint32_t magic;
  std::uint16_t version_major = 2;
  std::uint16_t version_minor = 4;
  std::int32_t thiszone = 0;  // timestamps are UTC
  std::uint32_t sigfigs = 0;
  std::uint32_t snaplen;
  std::uint32_t network = linktype_ethernet;
};
static_assert(sizeof(file_header) == 24);

struct record_header {
  std::uint32_t ts_sec;
  std::uint32_t ts_frac;  // microseconds or nanoseconds, by the magic
  std::uint32_t incl_len;
  std::uint32_t orig_len;
};
static_assert(sizeof(record_header) == 16);

// Records are small; a large buffer turns them into few write(2) calls.
constexpr std::size_t file_buffer_bytes = 1 << 20;

}  // namespace

std::expected<std::unique_ptr<pcap_writer>, std::string> pcap_writer::open(const std::string& path,
                                                                           std::uint32_t snaplen,
                                                                           pcap_resolution res) {
  if (snaplen == 0) return std::unexpected(fmt::format("pcap {}: snap length must be at least 1", path));
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return std::unexpected(fmt::format("pcap {}: cannot create: {}", path, std::strerror(errno)));
  std::setvbuf(f, nullptr, _IOFBF, file_buffer_bytes);
  const file_header h{.magic = res == pcap_resolution::nano ? magic_nano : magic_micro, .snaplen = snaplen};
  if (std::fwrite(&h, sizeof h, 1, f) != 1) {
    const int err = errno;
    std::fclose(f);
    return std::unexpected(fmt::format("pcap {}: cannot write the header: {}", path, std::strerror(err)));
  }
  return std::unique_ptr<pcap_writer>(new pcap_writer(f, path, snaplen, res));
}

pcap_writer::pcap_writer(std::FILE* f, std::string path, std::uint32_t snaplen, pcap_resolution res)
    : file_(f), path_(std::move(path)), snaplen_(snaplen), res_(res) {}

pcap_writer::~pcap_writer() { std::fclose(file_); }

bool pcap_writer::write_record_header(std::uint64_t ts_ns, std::uint32_t incl_len, std::uint32_t orig_len) {
  const std::uint64_t frac_ns = ts_ns % 1'000'000'000;
  const record_header r{
      .ts_sec = std::uint32_t(ts_ns / 1'000'000'000),
      .ts_frac = std::uint32_t(res_ == pcap_resolution::nano ? frac_ns : frac_ns / 1000),
      .incl_len = incl_len,
      .orig_len = orig_len,
  };
  return std::fwrite(&r, sizeof r, 1, file_) == 1;
}

bool pcap_writer::finish_record(bool ok) {
  if (ok) {
    ++frames_;
  } else {
    ++errors_;
  }
  return ok;
}

bool pcap_writer::write(std::uint64_t ts_ns, const rte_mbuf* m) {
  const std::uint32_t incl_len = std::min(m->pkt_len, snaplen_);
  std::lock_guard lock(mutex_);
  bool ok = write_record_header(ts_ns, incl_len, m->pkt_len);
  std::uint32_t left = incl_len;
  for (const rte_mbuf* seg = m; ok && seg != nullptr && left > 0; seg = seg->next) {
    const std::uint32_t take = std::min<std::uint32_t>(seg->data_len, left);
    ok = std::fwrite(rte_pktmbuf_mtod(seg, const void*), 1, take, file_) == take;
    left -= take;
  }
  return finish_record(ok);
}

bool pcap_writer::write(std::uint64_t ts_ns, std::span<const std::byte> captured, std::uint32_t orig_len) {
  const auto incl_len = std::uint32_t(std::min<std::size_t>(captured.size(), snaplen_));
  std::lock_guard lock(mutex_);
  const bool ok = write_record_header(ts_ns, incl_len, orig_len) &&
                  std::fwrite(captured.data(), 1, incl_len, file_) == incl_len;
  return finish_record(ok);
}

std::expected<void, std::string> pcap_writer::flush() {
  std::lock_guard lock(mutex_);
  if (std::fflush(file_) != 0) return std::unexpected(fmt::format("pcap {}: {}", path_, std::strerror(errno)));
  return {};
}

std::uint64_t pcap_writer::frames() const {
  std::lock_guard lock(mutex_);
  return frames_;
}

std::uint64_t pcap_writer::errors() const {
  std::lock_guard lock(mutex_);
  return errors_;
}

}  // namespace affine::drivers
