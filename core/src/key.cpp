#include "pglock/key.hpp"

// SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but still there and
// about 1.5x faster on short names: EVP_DigestInit_ex2 goes through the provider layer on every
// call, which costs more than hashing the 64-byte block of a short name. They are used when the
// installed OpenSSL still builds them; otherwise the EVP path below gives the same bytes.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/opensslconf.h>
#include <openssl/sha.h>

#include <array>
#include <cstdlib>
#include <memory>

namespace pglock {
namespace {

#if defined(OPENSSL_NO_DEPRECATED_3_0)
// One digest context per thread, fetched once: EVP's one-shot helpers (and SHA256() in OpenSSL 3)
// look the algorithm up and allocate a context on every call.
struct DigestContext {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~DigestContext() {
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
    }
};

void sha256(std::string_view name, std::array<unsigned char, EVP_MAX_MD_SIZE>& sum) noexcept {
    thread_local DigestContext digest;
    unsigned int len = 0;
    if (!digest.md || !digest.ctx || EVP_DigestInit_ex2(digest.ctx, digest.md, nullptr) != 1 ||
        EVP_DigestUpdate(digest.ctx, name.data(), name.size()) != 1 ||
        EVP_DigestFinal_ex(digest.ctx, sum.data(), &len) != 1 || len < 8) {
        std::abort();  // libcrypto without SHA-256 is a broken install, not a runtime condition
    }
}
#else
void sha256(std::string_view name, std::array<unsigned char, EVP_MAX_MD_SIZE>& sum) noexcept {
    SHA256_CTX ctx;  // on the stack: no allocation, no provider lookup
    if (SHA256_Init(&ctx) != 1 || SHA256_Update(&ctx, name.data(), name.size()) != 1 || SHA256_Final(sum.data(), &ctx) != 1) {
        std::abort();  // as above: cannot fail on a working libcrypto
    }
}
#endif

}  // namespace

std::int64_t key_of(std::string_view name) noexcept {
    std::array<unsigned char, EVP_MAX_MD_SIZE> sum{};
    sha256(name, sum);
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | sum[static_cast<std::size_t>(i)];
    return static_cast<std::int64_t>(bits);
}

// Every name is pg_catalog's: an operator runs this as a superuser in databases whose owners may
// shadow unqualified functions, operators and relations (docs/security.md).
std::string_view pg_locks_query() noexcept {
    return "SELECT l.pid, l.granted, l.mode, a.state, a.application_name, a.wait_event_type, a.wait_event "
           "FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid OPERATOR(pg_catalog.=) l.pid "
           "WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.objsubid OPERATOR(pg_catalog.=) 1 "
           "AND l.classid OPERATOR(pg_catalog.=) $1 AND l.objid OPERATOR(pg_catalog.=) $2 "
           "AND l.database OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database d "
           "WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())";
}

namespace {
std::string pg_locks_sql_of(const std::string& comment, LockTag tag, int objsubid) {
    return "-- " + comment +
           "\n-- (every name qualified with pg_catalog: safe to run in any database, as any role)"
           "\nSELECT l.pid, l.granted, l.mode, a.state, a.application_name, a.wait_event_type, a.wait_event\n"
           "FROM pg_catalog.pg_locks l\n"
           "JOIN pg_catalog.pg_stat_activity a ON a.pid OPERATOR(pg_catalog.=) l.pid\n"
           "WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.objsubid OPERATOR(pg_catalog.=) " +
           std::to_string(objsubid) + "\n  AND l.classid OPERATOR(pg_catalog.=) " + std::to_string(tag.classid) +
           " AND l.objid OPERATOR(pg_catalog.=) " + std::to_string(tag.objid) +
           "\n  AND l.database OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database d"
           "\n    WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database());";
}
}  // namespace

std::string pg_locks_sql(std::int64_t key) {
    return pg_locks_sql_of("advisory key " + std::to_string(key), tag_of(key), 1);
}

std::string pg_locks_sql_pair(std::int32_t key1, std::int32_t key2) {
    const LockTag tag{static_cast<std::uint32_t>(key1), static_cast<std::uint32_t>(key2)};
    return pg_locks_sql_of("advisory int4 pair " + std::to_string(key1) + "," + std::to_string(key2), tag, 2);
}

}  // namespace pglock
