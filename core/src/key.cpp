#include "pglock/key.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstdlib>
#include <memory>

namespace pglock {
namespace {

// One digest context per thread, fetched once: EVP's one-shot helpers look the algorithm up and
// allocate a context on every call, which costs more than hashing a short name.
struct DigestContext {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~DigestContext() {
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
    }
};

}  // namespace

std::int64_t key_of(std::string_view name) noexcept {
    thread_local DigestContext digest;
    std::array<unsigned char, EVP_MAX_MD_SIZE> sum{};
    unsigned int len = 0;
    if (!digest.md || !digest.ctx || EVP_DigestInit_ex2(digest.ctx, digest.md, nullptr) != 1 ||
        EVP_DigestUpdate(digest.ctx, name.data(), name.size()) != 1 ||
        EVP_DigestFinal_ex(digest.ctx, sum.data(), &len) != 1 || len < 8) {
        std::abort();  // libcrypto without SHA-256 is a broken install, not a runtime condition
    }
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | sum[static_cast<std::size_t>(i)];
    return static_cast<std::int64_t>(bits);
}

std::string_view pg_locks_query() noexcept {
    return "SELECT l.pid, l.granted, l.mode, a.state, a.application_name, a.wait_event_type, a.wait_event "
           "FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
           "WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.classid = $1 AND l.objid = $2 "
           "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())";
}

std::string pg_locks_sql(std::int64_t key) {
    const LockTag tag = tag_of(key);
    return "-- advisory key " + std::to_string(key) +
           "\nSELECT l.pid, l.granted, l.mode, a.state, a.application_name, a.wait_event_type, a.wait_event\n"
           "FROM pg_locks l JOIN pg_stat_activity a USING (pid)\n"
           "WHERE l.locktype = 'advisory' AND l.objsubid = 1\n"
           "  AND l.classid = " + std::to_string(tag.classid) + " AND l.objid = " + std::to_string(tag.objid) +
           "\n  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database());";
}

}  // namespace pglock
