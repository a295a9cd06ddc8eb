#include "stack/tcp/isn.hh"

#include <bit>
#include <cstring>
#include <random>

namespace affine::stack::tcp {

namespace {

std::uint64_t load_le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

struct sip_state {
  std::uint64_t v0, v1, v2, v3;

  void round() {
    v0 += v1; v1 = std::rotl(v1, 13); v1 ^= v0; v0 = std::rotl(v0, 32);
    v2 += v3; v3 = std::rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = std::rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = std::rotl(v1, 17); v1 ^= v2; v2 = std::rotl(v2, 32);
  }
  // c = 2 rounds per message word.
  void compress(std::uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

}  // namespace

std::uint64_t siphash_2_4(const siphash_key& key, std::span<const std::byte> message) {
  const std::uint64_t k0 = load_le64(key.data());
  const std::uint64_t k1 = load_le64(key.data() + 8);
  // Initialization: "somepseudorandomlygeneratedbytes" xor the key.
  sip_state s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
              k1 ^ 0x7465646279746573ull};
  std::uint8_t word[8];
  const std::size_t whole = message.size() & ~std::size_t{7};
  for (std::size_t i = 0; i < whole; i += 8) {
    for (std::size_t j = 0; j < 8; ++j) word[j] = std::uint8_t(message[i + j]);
    s.compress(load_le64(word));
  }
  // The last word: the remaining bytes, zero padding, and the length mod 256
  // in the top byte.
  std::uint64_t last = std::uint64_t(message.size() & 0xff) << 56;
  for (std::size_t j = whole; j < message.size(); ++j)
    last |= std::uint64_t(std::uint8_t(message[j])) << (8 * (j - whole));
  s.compress(last);
  // Finalization: d = 4 rounds.
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

siphash_key random_siphash_key() {
  std::random_device rd;
  siphash_key key;
  for (std::size_t i = 0; i < key.size(); i += 4) {
    const std::uint32_t r = rd();
    for (std::size_t j = 0; j < 4; ++j) key[i + j] = std::uint8_t(r >> (8 * j));
  }
  return key;
}

void put_be(std::span<std::byte> out, std::uint32_t v, std::size_t bytes) {
  for (std::size_t j = 0; j < bytes; ++j) out[j] = std::byte(v >> (8 * (bytes - 1 - j)));
}

std::size_t put_connection_id(const flow_tuple& t, std::span<std::byte, max_connection_id> out) {
  const std::size_t a = t.v4() ? 4 : 16;  // the address's bytes, from its end
  std::memcpy(out.data(), t.local_addr.data() + 16 - a, a);
  put_be(out.subspan(a, 2), t.local_port, 2);
  std::memcpy(out.data() + a + 2, t.remote_addr.data() + 16 - a, a);
  put_be(out.subspan(2 * a + 2, 2), t.remote_port, 2);
  return 2 * a + 4;
}

isn_generator isn_generator::from_random_device() { return isn_generator(random_siphash_key()); }

seq32 isn_generator::next(const flow_tuple& t, std::uint64_t now_ns) const {
  // RFC 6528 3: F hashes the connection-id with the secret key.
  std::array<std::byte, max_connection_id> id;
  const std::size_t n = put_connection_id(t, id);
  const auto f = std::uint32_t(siphash_2_4(secret_, std::span(id).first(n)));
  // RFC 6528 3: M is a timer that ticks every 4 microseconds (mod 2^32).
  const auto m = std::uint32_t(now_ns / 4'000);
  return seq32(m + f);
}

}  // namespace affine::stack::tcp
