// One libpq connection with exactly one owner. Move-only; the destructor closes it.
// Every wait inside (connect, query) can be interrupted by the Context's stop_token or deadline:
// a stop request cancels the running statement on the server with libpq's cancel request, so
// nothing is left running there when the call returns.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pglock/context.hpp"
#include "pglock/keepalive.hpp"

struct pg_conn;
struct pg_result;

namespace pglock {

namespace detail {
struct SessionOps;
}

// A text-format statement parameter; default-constructed or from nullptr it is SQL NULL.
class Param {
public:
    Param() = default;
    Param(std::nullptr_t) {}
    Param(std::string_view text) : text_(std::string(text)) {}
    Param(const char* text) : text_(std::string(text)) {}
    Param(const std::string& text) : text_(text) {}
    Param(std::int64_t value) : text_(std::to_string(value)) {}
    Param(int value) : text_(std::to_string(value)) {}
    Param(std::uint32_t value) : text_(std::to_string(value)) {}

    const char* c_str() const noexcept { return text_ ? text_->c_str() : nullptr; }

private:
    std::optional<std::string> text_;
};

// A statement's result; owns the PGresult.
class Result {
public:
    Result() = default;
    explicit Result(pg_result* res) noexcept : res_(res) {}

    int rows() const noexcept;
    int columns() const noexcept;
    bool is_null(int row, int column) const noexcept;
    std::string_view get(int row, int column) const noexcept;  // "" when NULL
    std::int64_t get_int64(int row, int column) const;         // throws Error{query_failed} if not an integer
    bool get_bool(int row, int column) const noexcept;         // PostgreSQL's "t"
    int column_index(const char* name) const noexcept;         // -1 when absent

    pg_result* native_handle() const noexcept { return res_.get(); }

private:
    struct Free {
        void operator()(pg_result* res) const noexcept;
    };
    std::unique_ptr<pg_result, Free> res_;
};

class Session {
public:
    // Connects with a conninfo string or a postgresql:// URI; libpq's defaults and PG* environment
    // variables fill what it leaves out. Throws Error{connection_failed} with libpq's message,
    // Error{canceled} / Error{deadline_exceeded} when the context ends the attempt.
    static Session connect(const std::string& conninfo, const Context& ctx = {});
    // The same, with connection parameters that override the conninfo's (e.g. a password kept in
    // memory only, never in a file or the environment).
    using Overrides = std::vector<std::pair<std::string, std::string>>;
    static Session connect(const std::string& conninfo, const Context& ctx, const Overrides& overrides);
    // The same, with TCP keepalives and a user timeout so that a silently cut connection fails
    // instead of hanging (see keepalive.hpp). Keepalive keywords in the conninfo win over
    // `keepalive`; libpq ignores them on unix sockets.
    static Session connect(const std::string& conninfo, const Context& ctx, const Overrides& overrides,
                           const Keepalive& keepalive);

    Session(Session&&) noexcept;
    Session& operator=(Session&&) noexcept;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session();

    // Runs one statement with text parameters ($1, $2, ...). Throws Error{query_failed} with the
    // SQLSTATE on a server error, Error{connection_failed} when the connection breaks, and
    // Error{canceled} / Error{deadline_exceeded} after cancelling the statement on the server.
    Result exec(std::string_view sql, std::span<const Param> params = {}, const Context& ctx = {});
    Result exec(std::string_view sql, std::initializer_list<Param> params, const Context& ctx = {}) {
        return exec(sql, std::span<const Param>(params.begin(), params.size()), ctx);
    }

    // The server process serving this session (pg_backend_pid()), known since connect.
    int backend_pid() const noexcept { return backend_pid_; }
    // The connection is up (libpq's CONNECTION_OK).
    bool ok() const noexcept;
    // Up, outside any transaction, and with no cancel request still in flight: the only state in
    // which a pool may lend it again.
    bool reusable() const noexcept;
    // The server is a hot standby. A primary is known without a round trip (the in_hot_standby
    // parameter on PostgreSQL 14+, or one pg_is_in_recovery() query per session on older
    // servers); a standby is asked pg_is_in_recovery() each time, since a promotion reaches an
    // idle session's parameters only with its next statement.
    bool in_recovery();
    // Without blocking: reads what the server sent unasked (a termination notice, a notification)
    // and reports whether the session is still alive. Used by the pool and the lost-lock watcher.
    bool check_alive() noexcept;
    // The socket libpq uses, for readiness polling; -1 when closed.
    int socket() const noexcept;

    pg_conn* native_handle() const noexcept { return conn_.get(); }

private:
    friend struct detail::SessionOps;
    Session() = default;

    struct CloseConn {
        void operator()(pg_conn* conn) const noexcept;
    };

    std::unique_ptr<pg_conn, CloseConn> conn_;
    int backend_pid_ = 0;
    int wake_fd_ = -1;                     // eventfd a stop request writes to, made on first need
    // Set by the notice receiver when the server sends FATAL while the session is idle (a
    // terminated backend): libpq keeps the status OK until it reads EOF, which may come later.
    // On the heap so libpq's pointer to it survives moves.
    std::unique_ptr<bool> fatal_ = std::make_unique<bool>(false);
    std::optional<bool> in_recovery_;      // the last answer (false is final: a primary stays one)
    // A cancel request was sent and no statement has completed since. The server may act on a
    // cancel late, against the next statement: such a session is not lent to anyone else.
    bool cancel_pending_ = false;
    // Set for the statements nobody can stop (detail::SessionOps::CloseAfter): past it the
    // connection is closed instead of waited for. The moves leave it behind on purpose: it
    // belongs to the CloseAfter scope on this object, whose destructor restores it here.
    std::optional<std::chrono::steady_clock::time_point> close_at_;
    std::vector<std::string> prepared_;    // statement names prepared on this session
    // The random pglock.owner this client set on its backend when the pool connected it; the
    // library's session-level lock statements act only where the backend carries it. Empty for a
    // session no pool connected (see detail::SessionOps::claim).
    std::string owner_;
    // The fence table as the first fenced lock on this session found it, schema-qualified and
    // quoted; empty until then.
    std::string fence_table_;
    // exec() ran a statement since the last pg_advisory_unlock_all(): it may have taken a
    // session-level advisory lock, which a pool must drop before lending the session again.
    bool may_hold_advisory_locks_ = false;
    // Whether to read the socket before polling it for a statement's reply (SessionOps::run):
    // a score of how often reading first found the reply (up on a find, down on a miss), and a
    // count of statements that decides when to try reading first while the score says no.
    std::uint8_t read_first_score_ = 0;
    std::uint8_t read_first_probe_ = 0;
};

}  // namespace pglock
