#include "basic_auth.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cctype>
#include <memory>
#include <stdexcept>
#include <string>

namespace pglock::cli {

namespace {

// bcrypt reads at most 72 bytes of a password: a longer one would pass on its first 72.
constexpr std::size_t bcrypt_max_password = 72;
// Remembered successes; the set starts over when full (a few users, a few passwords each).
constexpr std::size_t max_remembered = 1024;

// crypt(3) of `phrase` with `setting` (a whole hash, or a salt from crypt_gensalt); "" on error.
std::string bcrypt(const std::string& phrase, const std::string& setting) {
    auto data = std::make_unique<crypt_data>();
    const char* out = crypt_rn(phrase.c_str(), setting.c_str(), data.get(), sizeof *data);
    return out && out[0] != '*' ? std::string(out) : std::string();
}

bool iequals_prefix(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
    return true;
}

}  // namespace

BasicAuth::BasicAuth(std::map<std::string, std::string, std::less<>> users) : users_(std::move(users)) {
    if (users_.empty()) return;
    const std::string& model = users_.begin()->second;  // "$2y$10$...": its cost
    const unsigned long cost = std::stoul(model.substr(4, 2));
    unsigned char secret[32];
    if (RAND_bytes(secret, sizeof secret) != 1) throw std::runtime_error("basic auth: no random bytes for the decoy");
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    if (!crypt_gensalt_rn("$2b$", cost, nullptr, 0, salt, sizeof salt))
        throw std::runtime_error("basic auth: crypt_gensalt cannot make a bcrypt salt");
    std::string phrase;
    for (const unsigned char b : secret) phrase += static_cast<char>('a' + b % 26);
    decoy_ = bcrypt(phrase, salt);
    if (decoy_.empty()) throw std::runtime_error("basic auth: this libcrypt cannot compute bcrypt");
}

bool BasicAuth::decode(std::string_view header, Credentials& out) {
    if (!iequals_prefix(header, "basic ")) return false;
    std::string_view b64 = header.substr(6);
    while (!b64.empty() && b64.front() == ' ') b64.remove_prefix(1);
    if (b64.empty() || b64.size() % 4 != 0 || b64.size() > 4096) return false;
    std::string decoded(b64.size() / 4 * 3, '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                  reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
    if (n < 0) return false;
    std::size_t size = static_cast<std::size_t>(n);
    for (std::size_t i = b64.size(); i > 0 && b64[i - 1] == '='; --i) --size;  // EVP counts the padding
    decoded.resize(size);
    const auto colon = decoded.find(':');
    if (colon == std::string::npos) return false;
    out.user = decoded.substr(0, colon);
    out.password = decoded.substr(colon + 1);
    return out.password.find('\0') == std::string::npos && out.password.size() <= bcrypt_max_password;
}

BasicAuth::Digest BasicAuth::remembered_key(const Credentials& c, std::string_view hash) const {
    std::string input;
    for (std::string_view part : {std::string_view(c.user), hash, std::string_view(c.password)}) {
        input += std::to_string(part.size()) + ':';  // lengths first: no two triples give one input
        input += part;
    }
    Digest d{};
    unsigned int size = 0;
    EVP_Digest(input.data(), input.size(), d.data(), &size, EVP_sha256(), nullptr);
    OPENSSL_cleanse(input.data(), input.size());
    return d;
}

BasicAuth::Verdict BasicAuth::quick(std::string_view authorization) const {
    Credentials c;
    if (!decode(authorization, c)) return Verdict::denied;
    const auto user = users_.find(c.user);
    if (user == users_.end()) return Verdict::needs_bcrypt;  // denied, after the decoy's bcrypt
    const Digest key = remembered_key(c, user->second);
    OPENSSL_cleanse(c.password.data(), c.password.size());
    std::lock_guard lock(mutex_);
    return passed_.contains(key) ? Verdict::allowed : Verdict::needs_bcrypt;
}

bool BasicAuth::verify(std::string_view authorization) {
    Credentials c;
    if (!decode(authorization, c)) return false;
    const auto user = users_.find(c.user);
    const std::string& hash = user == users_.end() ? decoy_ : user->second;
    const std::string computed = bcrypt(c.password, hash);
    const bool match = computed.size() == hash.size() && CRYPTO_memcmp(computed.data(), hash.data(), hash.size()) == 0;
    const bool ok = match && user != users_.end();
    if (ok) {
        const Digest key = remembered_key(c, hash);
        std::lock_guard lock(mutex_);
        if (passed_.size() >= max_remembered) passed_.clear();
        passed_.insert(key);
    }
    OPENSSL_cleanse(c.password.data(), c.password.size());
    return ok;
}

}  // namespace pglock::cli
