#include "pglock/error.hpp"

namespace pglock {

std::string_view code_string(Errc code) noexcept {
    switch (code) {
        case Errc::acquire_failed: return "lock_acquire_failed";
        case Errc::release_failed: return "lock_release_failed";
        case Errc::nil_db: return "lock_nil_db";
        case Errc::empty_name: return "lock_empty_name";
        case Errc::canceled: return "canceled";
        case Errc::deadline_exceeded: return "deadline_exceeded";
        case Errc::lock_lost: return "lock_lost";
        case Errc::on_standby: return "lock_on_standby";
        case Errc::connection_failed: return "connection_failed";
        case Errc::query_failed: return "query_failed";
        case Errc::session_changed: return "lock_session_changed";
        case Errc::key_collision: return "lock_key_collision";
    }
    return "unknown";
}

namespace {
class Category final : public std::error_category {
public:
    const char* name() const noexcept override { return "pglock"; }
    std::string message(int value) const override {
        return std::string(code_string(static_cast<Errc>(value)));
    }
};
}  // namespace

const std::error_category& error_category() noexcept {
    static const Category category;
    return category;
}

Error::Error(Errc code, std::string message, std::string sqlstate)
    : std::runtime_error(std::string(code_string(code)) + ": " + message),
      code_(code),
      detail_(std::move(message)),
      sqlstate_(std::move(sqlstate)) {}

}  // namespace pglock
