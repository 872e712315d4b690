// The resolver's key parser (core/src/resolve.cpp): any text an operator could type or paste.
// Properties, from resolve.hpp's contract:
//   - exactly one of key/error is set, and a key always says which form it was read in;
//   - looks_like_key is true exactly when the parse succeeded or failed as a key (a form is set),
//     so the UI never hashes a half-typed key as a name nor shows a key error for a name;
//   - surrounding ASCII whitespace changes nothing;
//   - a decimal key is the value strtoll reads, and out of range exactly when strtoll says so;
//   - every key, and the key of the text read as a name (key_of), survives the round trip
//     key -> decimal / 0x hex / classid/objid pair text -> key, in the form that text has.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "pglock/key.hpp"
#include "pglock/resolve.hpp"

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

void check_reads_back(std::int64_t key, const std::string& text, pglock::KeyInputForm form) {
    const pglock::KeyInput again = pglock::parse_key_input(text);
    FUZZ_CHECK(again.ok() && *again.key == key, "a key written back as text reads as the same key");
    FUZZ_CHECK(again.form == form, "a key written back as text reads in the form it was written");
}

// Every way resolve.hpp documents to write a key, read back.
void check_round_trip(std::int64_t key) {
    const auto bits = static_cast<unsigned long long>(static_cast<std::uint64_t>(key));
    const pglock::LockTag tag = pglock::tag_of(key);
    FUZZ_CHECK(pglock::key_of(tag) == key, "key_of(tag_of(key)) == key");
    char buf[96];
    check_reads_back(key, std::to_string(key), pglock::KeyInputForm::decimal);
    std::snprintf(buf, sizeof buf, "0x%016llx", bits);
    check_reads_back(key, buf, pglock::KeyInputForm::hex);
    std::snprintf(buf, sizeof buf, "0X%llX", bits);
    check_reads_back(key, buf, pglock::KeyInputForm::hex);
    std::snprintf(buf, sizeof buf, "%u/%u", tag.classid, tag.objid);
    check_reads_back(key, buf, pglock::KeyInputForm::pair);
    std::snprintf(buf, sizeof buf, "(%u, %u)", tag.classid, tag.objid);
    check_reads_back(key, buf, pglock::KeyInputForm::pair);
    std::snprintf(buf, sizeof buf, "objid=%u, CLASSID=%u", tag.objid, tag.classid);
    check_reads_back(key, buf, pglock::KeyInputForm::pair);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const pglock::KeyInput in = pglock::parse_key_input(text);

    FUZZ_CHECK(in.ok() == in.error.empty(), "exactly one of key and error is set");
    if (in.ok()) FUZZ_CHECK(in.form != pglock::KeyInputForm::none, "a key says which form it had");
    FUZZ_CHECK(pglock::looks_like_key(text) == (in.ok() || in.form != pglock::KeyInputForm::none),
               "looks_like_key is true exactly for keys and key-shaped errors");

    const std::string padded = " \t\r\n" + std::string(text) + "\f\v \n";
    const pglock::KeyInput same = pglock::parse_key_input(padded);
    FUZZ_CHECK(same.key == in.key && same.error == in.error && same.form == in.form,
               "surrounding whitespace changes nothing");

    if (in.form == pglock::KeyInputForm::decimal) {
        // Independent reading: strtoll on the trimmed digits (no NUL can be inside: a decimal
        // key is [+-]?[0-9]+).
        const std::string digits(trimmed(text));
        errno = 0;
        char* end = nullptr;
        const long long expected = std::strtoll(digits.c_str(), &end, 10);
        // A decimal with a stray character ("12a") is a key-shaped error that strtoll stops short of.
        const bool whole = end == digits.c_str() + digits.size();
        FUZZ_CHECK(whole || !in.ok(), "a decimal key is all digits");
        if (whole) {
            FUZZ_CHECK(in.ok() == (errno != ERANGE), "a decimal key fails exactly when it is out of int64 range");
            if (in.ok()) FUZZ_CHECK(*in.key == expected, "a decimal key is the value strtoll reads");
        }
    }

    if (in.ok()) check_round_trip(*in.key);
    // The text read as a name: the key the resolver then looks up.
    check_round_trip(pglock::key_of(text));
    return 0;
}
