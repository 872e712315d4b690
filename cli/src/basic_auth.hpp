// HTTP basic authentication against bcrypt hashes (a web config's basic_auth_users), as
// exporter-toolkit does it: an unknown user costs the same bcrypt as a known one, and
// credentials that passed once are remembered (by their SHA-256), so a scraper that signs in on
// every request pays for bcrypt once, not on each scrape.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace pglock::cli {

class BasicAuth {
public:
    // `users`: name -> bcrypt hash, as parse_web_config() checked them. Makes the decoy hash for
    // unknown users with the cost of the first user's (one bcrypt, at start).
    explicit BasicAuth(std::map<std::string, std::string, std::less<>> users);

    bool enabled() const noexcept { return !users_.empty(); }

    enum class Verdict { allowed, denied, needs_bcrypt };
    // Without bcrypt, for the HTTP loop: `allowed` for credentials that passed before, `denied`
    // for an Authorization header that cannot pass (none, not Basic, malformed, a password with
    // a NUL byte or longer than bcrypt reads), else `needs_bcrypt`. Thread-safe.
    Verdict quick(std::string_view authorization) const;
    // The full check, tens of milliseconds at bcrypt's usual cost: run it off the HTTP loop.
    // Thread-safe.
    bool verify(std::string_view authorization);

private:
    using Digest = std::array<unsigned char, 32>;
    struct Credentials {
        std::string user, password;
    };
    static bool decode(std::string_view authorization, Credentials& out);
    Digest remembered_key(const Credentials& c, std::string_view hash) const;

    const std::map<std::string, std::string, std::less<>> users_;
    std::string decoy_;  // a bcrypt hash of a random password nobody knows
    mutable std::mutex mutex_;
    std::set<Digest> passed_;  // under mutex_
};

}  // namespace pglock::cli
