#include "digests.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>
#include <string>

namespace pglock::digests {
namespace {

constexpr std::array<std::uint32_t, 256> make_crc_table() noexcept {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    return table;
}
constexpr auto crc_table = make_crc_table();

std::array<unsigned char, 8> digest_prefix(const EVP_MD* md, std::string_view bytes) noexcept {
    std::array<unsigned char, EVP_MAX_MD_SIZE> sum{};
    unsigned int len = 0;
    // libcrypto without these digests is a broken install, not a runtime condition (as key.cpp).
    if (!md || EVP_Digest(bytes.data(), bytes.size(), sum.data(), &len, md, nullptr) != 1 || len < 8) std::abort();
    std::array<unsigned char, 8> out{};
    for (std::size_t i = 0; i < 8; ++i) out[i] = sum[i];
    return out;
}

}  // namespace

std::uint32_t crc32_ieee(std::string_view bytes) noexcept {
    std::uint32_t c = 0xffffffffu;
    for (const char ch : bytes) c = crc_table[(c ^ static_cast<unsigned char>(ch)) & 0xffu] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

std::array<unsigned char, 8> sha1_prefix(std::string_view bytes) noexcept { return digest_prefix(EVP_sha1(), bytes); }
std::array<unsigned char, 8> sha224_prefix(std::string_view bytes) noexcept { return digest_prefix(EVP_sha224(), bytes); }
std::array<unsigned char, 8> md5_prefix(std::string_view bytes) noexcept { return digest_prefix(EVP_md5(), bytes); }

std::array<unsigned char, 8> hkdf_sha256_8(std::string_view ikm, std::string_view info) noexcept {
    // Extract: PRK = HMAC(salt, IKM), the absent salt being 32 zero bytes. Expand: the first block
    // T(1) = HMAC(PRK, info || 0x01) is all 8 bytes need.
    const std::array<unsigned char, 32> salt{};
    std::array<unsigned char, EVP_MAX_MD_SIZE> prk{};
    unsigned int prk_len = 0;
    if (!HMAC(EVP_sha256(), salt.data(), static_cast<int>(salt.size()), reinterpret_cast<const unsigned char*>(ikm.data()),
              ikm.size(), prk.data(), &prk_len))
        std::abort();
    std::string block(info);
    block.push_back('\x01');
    std::array<unsigned char, EVP_MAX_MD_SIZE> t1{};
    unsigned int t1_len = 0;
    if (!HMAC(EVP_sha256(), prk.data(), static_cast<int>(prk_len), reinterpret_cast<const unsigned char*>(block.data()),
              block.size(), t1.data(), &t1_len) || t1_len < 8)
        std::abort();
    std::array<unsigned char, 8> out{};
    for (std::size_t i = 0; i < 8; ++i) out[i] = t1[i];
    return out;
}

std::int64_t big_endian(const std::array<unsigned char, 8>& b) noexcept {
    std::uint64_t v = 0;
    for (const unsigned char c : b) v = (v << 8) | c;
    return static_cast<std::int64_t>(v);
}

std::int64_t little_endian(const std::array<unsigned char, 8>& b) noexcept {
    std::uint64_t v = 0;
    for (auto it = b.rbegin(); it != b.rend(); ++it) v = (v << 8) | *it;
    return static_cast<std::int64_t>(v);
}

}  // namespace pglock::digests
