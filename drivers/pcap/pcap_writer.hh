#pragma once
// A writer of classic libpcap capture files (LINKTYPE_ETHERNET), the format
// tshark, tcpdump and Wireshark all read: a 24-byte file header, then per
// frame a 16-byte record header and the first `snaplen` bytes of the frame.
// Timestamps are nanoseconds or microseconds (the magic number says which).
//
// Safe to share between cores: a port's RX and TX queues may write from
// different threads, and each record goes out whole under one lock.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <expected>
#include <memory>
#include <mutex>
#include <span>
#include <string>

struct rte_mbuf;

namespace affine::drivers {

enum class pcap_resolution { micro, nano };

class pcap_writer {
 public:
  // Creates (truncates) `path` and writes the file header.
  static std::expected<std::unique_ptr<pcap_writer>, std::string> open(
      const std::string& path, std::uint32_t snaplen = 65535, pcap_resolution res = pcap_resolution::nano);
  ~pcap_writer();
  pcap_writer(const pcap_writer&) = delete;
  pcap_writer& operator=(const pcap_writer&) = delete;

  // One frame captured at `ts_ns` (nanoseconds since the Unix epoch, as
  // pcap readers expect). The data path throws nothing: false when the
  // file could not take the record, which errors() counts.
  bool write(std::uint64_t ts_ns, const rte_mbuf* m);
  // A frame of `orig_len` bytes of which `captured` are the first ones
  // (already cut to at most snaplen).
  bool write(std::uint64_t ts_ns, std::span<const std::byte> captured, std::uint32_t orig_len);

  // Push buffered records to the file, so a reader sees them.
  std::expected<void, std::string> flush();

  std::uint32_t snaplen() const { return snaplen_; }
  const std::string& path() const { return path_; }
  std::uint64_t frames() const;
  std::uint64_t errors() const;

 private:
  pcap_writer(std::FILE* f, std::string path, std::uint32_t snaplen, pcap_resolution res);
  // Precondition: mutex_ held.
  bool write_record_header(std::uint64_t ts_ns, std::uint32_t incl_len, std::uint32_t orig_len);
  bool finish_record(bool ok);

  mutable std::mutex mutex_;
  std::FILE* file_;
  std::string path_;
  std::uint32_t snaplen_;
  pcap_resolution res_;
  std::uint64_t frames_ = 0;
  std::uint64_t errors_ = 0;
};

}  // namespace affine::drivers
