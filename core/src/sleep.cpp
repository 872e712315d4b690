#include "pglock/sleep.hpp"

#include <condition_variable>
#include <mutex>

namespace pglock {

bool sleep_until(std::chrono::steady_clock::time_point until, std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any cv;
    std::unique_lock lock(mutex);
    // Nothing notifies cv but the stop token, so the predicate is only "stopped".
    return !cv.wait_until(lock, stop, until, [] { return false; }) && !stop.stop_requested();
}

bool sleep_for(std::chrono::steady_clock::duration duration, std::stop_token stop) {
    return sleep_until(std::chrono::steady_clock::now() + duration, std::move(stop));
}

void wait_for_stop(std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any cv;
    std::unique_lock lock(mutex);
    cv.wait(lock, stop, [] { return false; });
}

}  // namespace pglock
