#include "pglock/key_collision.hpp"

#include <algorithm>

#include "pglock/error.hpp"

namespace pglock {

std::vector<KeyCollision> find_key_collisions(std::span<const NamedKey> entries) {
    std::map<std::int64_t, std::vector<std::string>> by_key;
    for (const NamedKey& e : entries) by_key[e.key].push_back(e.name);
    std::vector<KeyCollision> out;
    for (auto& [key, names] : by_key) {
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        if (names.size() > 1) out.push_back({key, std::move(names)});
    }
    return out;
}

namespace {
std::string quoted(const std::string& name) {
    std::string out = "\"";
    for (unsigned char c : name) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            static const char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + '"';
}
}  // namespace

std::string describe(const KeyCollision& collision) {
    std::string names;
    for (std::size_t i = 0; i < collision.names.size(); ++i) {
        if (i) names += i + 1 == collision.names.size() ? " and " : ", ";
        names += quoted(collision.names[i]);
    }
    return "key " + std::to_string(collision.key) + " is shared by " + names + ": they take the same lock";
}

KeyRegistry& KeyRegistry::process() {
    static KeyRegistry* const registry = new KeyRegistry();  // never destroyed: Locks may be built at exit
    return *registry;
}

void KeyRegistry::claim(std::string_view name, std::int64_t key) {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = names_.try_emplace(key, name);
    if (inserted || it->second == name) return;
    throw Error(Errc::key_collision, describe({key, {it->second, std::string(name)}}) +
                                         " (the first was used earlier in this process)");
}

std::optional<std::string> KeyRegistry::name_of(std::int64_t key) const {
    std::lock_guard lock(mutex_);
    if (auto it = names_.find(key); it != names_.end()) return it->second;
    return std::nullopt;
}

std::size_t KeyRegistry::size() const {
    std::lock_guard lock(mutex_);
    return names_.size();
}

}  // namespace pglock
