// The hash functions other libraries' key schemes use (key_schemes.cpp). Not SHA-256: key_of()
// in key.cpp owns that one, tuned for the hot path.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace pglock::digests {

// CRC-32 as zlib's crc32(), Go's crc32.ChecksumIEEE and Ruby's Zlib.crc32 compute it (IEEE
// 802.3, reflected, init and final xor 0xffffffff).
std::uint32_t crc32_ieee(std::string_view bytes) noexcept;

// The first 8 bytes of each digest.
std::array<unsigned char, 8> sha1_prefix(std::string_view bytes) noexcept;
std::array<unsigned char, 8> sha224_prefix(std::string_view bytes) noexcept;
std::array<unsigned char, 8> md5_prefix(std::string_view bytes) noexcept;

// HKDF-SHA256 (RFC 5869) with no salt (HashLen zero bytes), 8 bytes of output.
std::array<unsigned char, 8> hkdf_sha256_8(std::string_view ikm, std::string_view info) noexcept;

std::int64_t big_endian(const std::array<unsigned char, 8>& b) noexcept;
std::int64_t little_endian(const std::array<unsigned char, 8>& b) noexcept;

}  // namespace pglock::digests
