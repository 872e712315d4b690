#include "pglock/key_scheme_audit.hpp"

#include <map>
#include <utility>

namespace pglock {

SchemeAudit audit_key_schemes(std::span<const std::string> names, std::span<const KeySchemeInfo* const> schemes,
                              const SchemeContext& context) {
    // Keyed by (form, packed): the two key spaces stay apart.
    std::map<std::pair<int, std::int64_t>, SchemeCollision> by_key;
    SchemeAudit audit;
    const auto add = [&](const KeySchemeInfo& scheme, std::optional<std::string_view> name) {
        try {
            const SchemeKey key = scheme_key(scheme, name, context);
            auto& slot = by_key[{static_cast<int>(key.form), key.packed}];
            slot.key = key;
            SchemeEntry entry{scheme.id, name ? std::optional<std::string>(std::string(*name)) : std::nullopt};
            for (const auto& seen : slot.entries)
                if (seen == entry) return;  // the same name twice is not a collision
            slot.entries.push_back(std::move(entry));
        } catch (const KeySchemeError& e) {
            audit.refused.push_back(e.what());
        }
    };
    for (const KeySchemeInfo* scheme : schemes) {
        if (scheme->name_use == NameUse::none) {
            add(*scheme, std::nullopt);
            continue;
        }
        for (const auto& name : names) add(*scheme, name);
    }
    for (auto& [k, slot] : by_key)
        if (slot.entries.size() > 1) audit.collisions.push_back(std::move(slot));
    return audit;
}

double expected_32bit_collisions(std::size_t names) noexcept {
    const double n = static_cast<double>(names);
    return n * (n - 1) / 2 / 4294967296.0;
}

}  // namespace pglock
