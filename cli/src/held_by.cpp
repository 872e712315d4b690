#include "held_by.hpp"

#include <exception>

namespace pglock::cli {

std::string held_by(Lock& lock) {
    try {
        const auto pids = lock.holders();
        if (pids.empty()) return "held by another session";
        std::string text = pids.size() == 1 ? "held by pid " : "held by pids ";
        for (std::size_t i = 0; i < pids.size(); ++i) text += (i ? ", " : "") + std::to_string(pids[i]);
        return text;
    } catch (const std::exception&) {
        return "held by another session";
    }
}

}  // namespace pglock::cli
