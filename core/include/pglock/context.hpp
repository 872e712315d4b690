// How a caller bounds a call: a stop_token (cancel) and an optional deadline.
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>

namespace pglock {

using Clock = std::chrono::steady_clock;

struct Context {
    std::stop_token stop;
    std::optional<Clock::time_point> deadline;

    static Context with_timeout(Clock::duration timeout, std::stop_token stop = {}) {
        return Context{std::move(stop), Clock::now() + timeout};
    }
};

}  // namespace pglock
