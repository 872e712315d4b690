// Typed errors of pglock. Every failure the library reports is a pglock::Error carrying an Errc
// (whose string form matches the Go package's error codes) and, when the server produced it, the
// SQLSTATE. Errc also plugs into std::error_code, which release() returns because it is noexcept.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace pglock {

enum class Errc {
    acquire_failed = 1,  // "lock_acquire_failed": taking the lock failed for a non-cancel reason
    release_failed,      // "lock_release_failed": pg_advisory_unlock errored or returned false
    nil_db,              // "lock_nil_db": a Lock built without a pool
    empty_name,          // "lock_empty_name": a Lock built with an empty name
    canceled,            // "canceled": the caller's stop_token was triggered
    deadline_exceeded,   // "deadline_exceeded": the caller's deadline passed
    lock_lost,           // "lock_lost": the session holding the lock died
    on_standby,          // "lock_on_standby": the server is in recovery; its advisory locks are local
    connection_failed,   // "connection_failed": could not open or keep a libpq connection
    query_failed,        // "query_failed": a statement failed on the server
    // "lock_session_changed": the lock's statements ran on different server backends (a
    // transaction-mode pooler such as PgBouncer pool_mode=transaction sits in between), so a
    // session-level lock cannot be trusted; the message names the backends involved.
    session_changed,
    key_collision,       // "lock_key_collision": another name already uses this key in the process
};

// The stable string form of a code, e.g. "lock_acquire_failed".
std::string_view code_string(Errc code) noexcept;

const std::error_category& error_category() noexcept;
inline std::error_code make_error_code(Errc code) noexcept {
    return {static_cast<int>(code), error_category()};
}

class Error : public std::runtime_error {
public:
    Error(Errc code, std::string message, std::string sqlstate = {});

    Errc code() const noexcept { return code_; }
    // The message without the "code: " prefix that what() carries.
    const std::string& detail() const noexcept { return detail_; }
    // Five-character SQLSTATE when the server reported one ("57014", "08006", ...), else empty.
    const std::string& sqlstate() const noexcept { return sqlstate_; }
    std::error_code error_code() const noexcept { return make_error_code(code_); }

private:
    Errc code_;
    std::string detail_;
    std::string sqlstate_;
};

}  // namespace pglock

template <>
struct std::is_error_code_enum<pglock::Errc> : std::true_type {};
