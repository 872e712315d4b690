#include "pglock/session.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <utility>

#include "pglock/conninfo.hpp"
#include "pglock/error.hpp"
#include "session_ops.hpp"
#include "pglock/sqlstate.hpp"

namespace pglock {

// ---- Result ----------------------------------------------------------------------------------

void Result::Free::operator()(pg_result* res) const noexcept { PQclear(res); }

int Result::rows() const noexcept { return res_ ? PQntuples(res_.get()) : 0; }
int Result::columns() const noexcept { return res_ ? PQnfields(res_.get()) : 0; }
bool Result::is_null(int row, int column) const noexcept {
    return !res_ || PQgetisnull(res_.get(), row, column) != 0;
}
std::string_view Result::get(int row, int column) const noexcept {
    if (is_null(row, column)) return {};
    return {PQgetvalue(res_.get(), row, column), static_cast<std::size_t>(PQgetlength(res_.get(), row, column))};
}
std::int64_t Result::get_int64(int row, int column) const {
    const std::string_view text = get(row, column);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) {
        throw Error(Errc::query_failed, "not an integer: '" + std::string(text) + "'");
    }
    return value;
}
bool Result::get_bool(int row, int column) const noexcept { return get(row, column) == "t"; }
int Result::column_index(const char* name) const noexcept { return res_ ? PQfnumber(res_.get(), name) : -1; }

// ---- Session ---------------------------------------------------------------------------------

void Session::CloseConn::operator()(pg_conn* conn) const noexcept { PQfinish(conn); }

Session::Session(Session&& other) noexcept
    : conn_(std::move(other.conn_)),
      backend_pid_(std::exchange(other.backend_pid_, 0)),
      wake_fd_(std::exchange(other.wake_fd_, -1)),
      fatal_(std::move(other.fatal_)),
      in_recovery_(std::exchange(other.in_recovery_, std::nullopt)),
      cancel_pending_(std::exchange(other.cancel_pending_, false)),
      prepared_(std::move(other.prepared_)),
      owner_(std::move(other.owner_)),
      fence_table_(std::move(other.fence_table_)),
      may_hold_advisory_locks_(std::exchange(other.may_hold_advisory_locks_, false)),
      read_first_score_(other.read_first_score_),
      read_first_probe_(other.read_first_probe_) {}

Session& Session::operator=(Session&& other) noexcept {
    if (this != &other) {
        if (wake_fd_ >= 0) ::close(wake_fd_);
        conn_ = std::move(other.conn_);
        backend_pid_ = std::exchange(other.backend_pid_, 0);
        wake_fd_ = std::exchange(other.wake_fd_, -1);
        fatal_ = std::move(other.fatal_);
        in_recovery_ = std::exchange(other.in_recovery_, std::nullopt);
        cancel_pending_ = std::exchange(other.cancel_pending_, false);
        prepared_ = std::move(other.prepared_);
        owner_ = std::move(other.owner_);
        fence_table_ = std::move(other.fence_table_);
        may_hold_advisory_locks_ = std::exchange(other.may_hold_advisory_locks_, false);
        read_first_score_ = other.read_first_score_;
        read_first_probe_ = other.read_first_probe_;
    }
    return *this;
}

Session::~Session() {
    if (wake_fd_ >= 0) ::close(wake_fd_);
}

bool Session::ok() const noexcept {
    return conn_ && PQstatus(conn_.get()) == CONNECTION_OK && !(fatal_ && *fatal_);
}

bool Session::reusable() const noexcept {
    return ok() && !cancel_pending_ && PQtransactionStatus(conn_.get()) == PQTRANS_IDLE;
}

int Session::socket() const noexcept { return conn_ ? PQsocket(conn_.get()) : -1; }

bool Session::check_alive() noexcept {
    if (!ok()) return false;
    // Something may have arrived unasked: a termination notice and then EOF, or a harmless
    // notification. libpq treats an error that arrives while idle as a notice and only sees
    // the connection end when a later read hits EOF, so read for as long as there is more.
    for (int round = 0; round < 8; ++round) {
        pollfd pfd{PQsocket(conn_.get()), POLLIN, 0};
        int rc;
        do {
            rc = ::poll(&pfd, 1, 0);
        } while (rc < 0 && errno == EINTR);
        if (rc <= 0) break;
        if (PQconsumeInput(conn_.get()) == 0) return false;
        while (PGnotify* note = PQnotifies(conn_.get())) PQfreemem(note);
        if (!ok()) return false;
    }
    return ok();
}

bool Session::in_recovery() {
    // "Not in recovery" is final: a primary never becomes a standby under a live session (a
    // demotion is a restart). Once seen, every later lock skips the lookup, a walk of libpq's
    // parameter list. "In recovery" can end at any moment, by a promotion, and the session
    // learns of it (in_hot_standby turning off) only with the answer to its next statement; an
    // idle pooled session would refuse locks on a server that is a primary by now. So a standby
    // answer is asked again, one round trip spent only where the lock is refused anyway.
    if (in_recovery_ == false) return false;
    if (const char* hot = conn_ ? PQparameterStatus(conn_.get(), "in_hot_standby") : nullptr) {
        if (std::strcmp(hot, "on") != 0) {
            in_recovery_ = false;
            return false;
        }
    }
    // Asked with no context to stop it: bounded instead (detail::kCleanupTimeout).
    const detail::SessionOps::CloseAfter limit(*this, Clock::now() + detail::kCleanupTimeout);
    const bool before = may_hold_advisory_locks_;
    in_recovery_ = exec("SELECT pg_catalog.pg_is_in_recovery()").get_bool(0, 0);
    may_hold_advisory_locks_ = before;  // that statement takes no lock
    return *in_recovery_;
}

Result Session::exec(std::string_view sql, std::span<const Param> params, const Context& ctx) {
    const std::string text(sql);
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const Param& p : params) values.push_back(p.c_str());
    auto send = [&](PGconn* conn) {
        return PQsendQueryParams(conn, text.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                                 nullptr, 0);
    };
    may_hold_advisory_locks_ = true;  // set before sending: a cancelled statement may still have run
    auto attempt = detail::SessionOps::run(*this, send, ctx);
    return detail::SessionOps::finish(*this, std::move(attempt));
}

Session Session::connect(const std::string& conninfo, const Context& ctx) {
    return detail::SessionOps::connect(conninfo, ctx, std::chrono::milliseconds(0));
}

Session Session::connect(const std::string& conninfo, const Context& ctx, const Overrides& overrides) {
    return detail::SessionOps::connect(conninfo, ctx, std::chrono::milliseconds(0), overrides);
}

Session Session::connect(const std::string& conninfo, const Context& ctx, const Overrides& overrides,
                         const Keepalive& keepalive) {
    return detail::SessionOps::connect(conninfo, ctx, std::chrono::milliseconds(0), overrides,
                                       keepalive_keywords(keepalive));
}

std::vector<std::pair<std::string, std::string>> keepalive_keywords(const Keepalive& k) {
    if (!k.enabled) return {};
    // libpq takes whole seconds and milliseconds; a zero or negative value would mean "the
    // system default" there, which is not what a caller asking for a bound means: at least 1.
    auto at_least_one = [](long long v) { return std::to_string(std::max<long long>(1, v)); };
    std::vector<std::pair<std::string, std::string>> out{
        {"keepalives", "1"},
        {"keepalives_idle", at_least_one(k.idle.count())},
        {"keepalives_interval", at_least_one(k.interval.count())},
        {"keepalives_count", at_least_one(k.count)},
    };
    if (k.user_timeout.count() > 0) out.emplace_back("tcp_user_timeout", std::to_string(k.user_timeout.count()));
    return out;
}

// ---- SessionOps ------------------------------------------------------------------------------

namespace detail {
namespace {

constexpr auto kCancelWait = std::chrono::seconds(10);  // how long a cancelled statement may take to end
// How long giving a session back may wait for its pg_advisory_unlock_all() (then it is closed).
constexpr auto kDropLocksTimeout = std::chrono::seconds(10);
// How long a caller waits for its cancel request to reach the server. libpq's PQcancel() opens a
// new connection and blocks until the request is through: across a silently cut network that
// lasts until tcp_user_timeout (or about 2 min of SYN retries without one), and a deadline would
// be overrun by as much. A local cancel takes milliseconds, a distant one well under a second.
constexpr auto kCancelSendWait = std::chrono::seconds(2);

// Sends a cancel request for the statement running on `conn`; true once the server has it.
// PQcancel() runs on a thread of its own with its own PGcancel, so that it may outlive this
// wait: a request not through after kCancelSendWait is given up on (false), and the caller
// closes the session instead, which ends the backend on the server as well.
bool send_cancel(PGconn* conn) {
    struct State {
        std::mutex mutex;
        std::condition_variable done_cv;
        bool done = false;
        bool ok = false;
    };
    PGcancel* cancel = PQgetCancel(conn);
    if (!cancel) return false;
    auto state = std::make_shared<State>();
    try {
        std::thread([cancel, state] {
            char err[256];
            const bool ok = PQcancel(cancel, err, sizeof err) != 0;
            PQfreeCancel(cancel);
            {
                std::lock_guard lock(state->mutex);
                state->done = true;
                state->ok = ok;
            }
            state->done_cv.notify_all();
        }).detach();
    } catch (...) {
        PQfreeCancel(cancel);
        return false;
    }
    std::unique_lock lock(state->mutex);
    state->done_cv.wait_for(lock, kCancelSendWait, [&] { return state->done; });
    return state->done && state->ok;
}

enum class Wake { ready, stop, deadline, timeout };

// What a stop request does: wake the poll() of the thread waiting on the session.
struct WakeWriter {
    int fd;
    void operator()() const noexcept {
        const std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
    }
};

int ms_until(Clock::time_point when) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(when - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

// Waits for the socket, the stop wake-up or a time limit. `deadline` is the caller's, `limit` an
// internal bound reported as timeout.
Wake wait_socket(int sock, short events, int wake_fd, const Context& ctx, std::optional<Clock::time_point> deadline,
                 std::optional<Clock::time_point> limit) {
    for (;;) {
        if (wake_fd >= 0 && ctx.stop.stop_requested()) return Wake::stop;
        int timeout = -1;
        if (deadline) timeout = ms_until(*deadline);
        if (limit) timeout = timeout < 0 ? ms_until(*limit) : std::min(timeout, ms_until(*limit));
        pollfd fds[2] = {{sock, events, 0}, {wake_fd, POLLIN, 0}};
        const int rc = ::poll(fds, wake_fd >= 0 ? 2 : 1, timeout);
        if (rc < 0) {
            if (errno == EINTR) continue;
            return Wake::ready;  // let libpq find out what is wrong with the socket
        }
        if (fds[0].revents != 0) return Wake::ready;
        if (wake_fd >= 0 && fds[1].revents != 0) return Wake::stop;
        if (rc == 0) {
            if (deadline && Clock::now() >= *deadline) return Wake::deadline;
            if (limit && Clock::now() >= *limit) return Wake::timeout;
        }
    }
}

std::string libpq_message(PGconn* conn) {
    std::string msg = conn ? PQerrorMessage(conn) : "out of memory";
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (msg.empty()) msg = "connection lost";
    return msg;
}

// libpq's "certificate verify failed" is OpenSSL's wording; say what it means for the user.
std::string explain_connect_failure(std::string msg) {
    if (msg.find("certificate verify failed") != std::string::npos) {
        msg += " (the server's TLS certificate could not be verified: it is not signed by the CA in sslrootcert, "
               "or it has expired)";
    }
    return msg;
}

// Notices are not printed (unlocking a lock not held warns; callers get false instead), but a
// FATAL one means the server is ending this session.
void on_notice(void* fatal_flag, const PGresult* res) {
    const char* severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
    if (severity && (std::strcmp(severity, "FATAL") == 0 || std::strcmp(severity, "PANIC") == 0)) {
        *static_cast<bool*>(fatal_flag) = true;
    }
}

}  // namespace

std::string sqlstate_of(const PGresult* res) {
    const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    return state ? state : "";
}

void SessionOps::close(Session& session) noexcept {
    session.conn_.reset();
}

void SessionOps::drop_advisory_locks(Session& session) noexcept {
    // A session that cannot be lent again is closed by the pool, which drops its locks anyway.
    if (!session.may_hold_advisory_locks_ || !session.reusable()) return;
    try {
        // Only on this client's own backend (see claim()): behind a transaction-mode pooler the
        // statement may reach a backend that serves another client, whose locks it must not drop.
        const std::string sql = with_session_names(
            "SELECT CASE WHEN pg_catalog.current_setting('pglock.owner', true) OPERATOR(pg_catalog.=) '{owner}' "
            "THEN pg_catalog.pg_advisory_unlock_all() IS NOT NULL END",
            session);
        const Context bounded{{}, Clock::now() + kDropLocksTimeout};
        auto send = [&](PGconn* conn) { return PQsendQueryParams(conn, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0); };
        const Result res = finish(session, run(session, send, bounded));
        if (res.is_null(0, 0)) {
            close(session);  // not our backend: whatever we took there goes only with the connection
            return;
        }
        session.may_hold_advisory_locks_ = false;
    } catch (...) {
        close(session);  // its locks go with the connection
    }
}

std::string SessionOps::with_session_names(std::string_view sql, const Session& session) {
    std::string out;
    out.reserve(sql.size() + 64);
    for (std::size_t i = 0; i < sql.size();) {
        if (sql.compare(i, 7, "{owner}") == 0) {
            out += session.owner_;
            i += 7;
        } else if (sql.compare(i, 7, "{fence}") == 0) {
            out += session.fence_table_;
            i += 7;
        } else {
            out += sql[i++];
        }
    }
    return out;
}

void SessionOps::set_owner(Session& session, std::string owner) { session.owner_ = std::move(owner); }
const std::string& SessionOps::owner(const Session& session) noexcept { return session.owner_; }
void SessionOps::set_fence_table(Session& session, std::string table) { session.fence_table_ = std::move(table); }
const std::string& SessionOps::fence_table(const Session& session) noexcept { return session.fence_table_; }

void SessionOps::took_no_advisory_lock(Session& session) noexcept { session.may_hold_advisory_locks_ = false; }

Attempt SessionOps::run(Session& session, SendRef send, const Context& ctx) {
    if (ctx.stop.stop_requested()) throw Error(Errc::canceled, "canceled before the statement was sent");
    if (ctx.deadline && Clock::now() >= *ctx.deadline) {
        throw Error(Errc::deadline_exceeded, "deadline passed before the statement was sent");
    }
    PGconn* conn = session.conn_.get();
    if (!conn || PQstatus(conn) != CONNECTION_OK) throw Error(Errc::connection_failed, "session is not connected");

    // A stop request wakes the poll below through an eventfd; made once per session, only for
    // callers that can stop at all.
    std::optional<std::stop_callback<WakeWriter>> on_stop;
    int wake_fd = -1;
    if (ctx.stop.stop_possible()) {
        if (session.wake_fd_ < 0) session.wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        wake_fd = session.wake_fd_;
        if (wake_fd >= 0) {
            on_stop.emplace(ctx.stop, WakeWriter{wake_fd});
        }
    }
    // On every way out, first the stop callback goes (its destructor waits for one running on
    // another thread), then the eventfd is emptied. In the other order a stop landing between
    // the two would leave it signalled, and the next statement on this session would be
    // cancelled for nothing.
    struct EndWake {
        std::optional<std::stop_callback<WakeWriter>>& on_stop;
        int fd;
        ~EndWake() {
            on_stop.reset();
            std::uint64_t count;
            if (fd >= 0) [[maybe_unused]] auto n = ::read(fd, &count, sizeof count);
        }
    } end_wake{on_stop, wake_fd};

    if (send(conn) == 0) {
        const std::string msg = libpq_message(conn);
        throw Error(Errc::connection_failed, msg);
    }

    Attempt attempt;
    bool cancel_sent = false;
    // The wait's own bound: SessionOps::CloseAfter's, and after a cancel request kCancelWait.
    std::optional<Clock::time_point> cancel_limit = session.close_at_;
    auto interrupt = [&](Interrupt why) {
        attempt.interrupt = why;
        cancel_sent = true;
        session.cancel_pending_ = true;
        cancel_limit = Clock::now() + kCancelWait;
        if (session.close_at_ && *session.close_at_ < *cancel_limit) cancel_limit = session.close_at_;
        if (!send_cancel(conn)) {
            // Without a cancel the statement could go on (a lock wait could still be granted):
            // closing the connection makes the server end the backend and drop its locks.
            close(session);
        }
    };

    // The bound passed: close the connection. An interrupted statement reports its interruption;
    // one nobody interrupted (under CloseAfter) fails.
    auto abandon = [&]() -> Attempt {
        close(session);
        if (attempt.interrupt == Interrupt::none) {
            throw Error(Errc::connection_failed, "the server did not answer in time; the connection was closed");
        }
        return std::move(attempt);
    };

    // Flush what libpq could not send yet (nonblocking mode), reading meanwhile so the server
    // never stalls on a full socket of ours.
    for (;;) {
        if (!session.conn_) return attempt;
        const int flushed = PQflush(conn);
        if (flushed == 0) break;
        if (flushed < 0) throw Error(Errc::connection_failed, libpq_message(conn));
        const Wake w = wait_socket(PQsocket(conn), POLLIN | POLLOUT, cancel_sent ? -1 : wake_fd, ctx,
                                   cancel_sent ? std::nullopt : ctx.deadline, cancel_limit);
        if (w == Wake::stop && !cancel_sent) interrupt(Interrupt::stop);
        else if (w == Wake::deadline && !cancel_sent) interrupt(Interrupt::deadline);
        else if (w == Wake::timeout) {
            return abandon();
        } else if (w == Wake::ready && PQconsumeInput(conn) == 0) {
            break;  // reported below from the connection's status
        }
    }

    // Reads what the socket has; false when the connection failed after an interruption (it is
    // closed then and the interruption is the outcome).
    auto consume = [&]() -> bool {
        if (PQconsumeInput(conn) != 0) return true;
        if (attempt.interrupt != Interrupt::none) {
            close(session);
            return false;
        }
        const std::string msg = libpq_message(conn);
        throw Error(Errc::connection_failed, msg, sqlstate_of(attempt.result.native_handle()));
    };

    // Read the reply before polling for it, or poll first? Reading first costs one read when the
    // reply is already there and a wasted read (then the poll and the read) when it is not;
    // polling first costs a poll and a read either way. So reading first pays when it finds the
    // reply more often than not. On an idle machine the reply comes tens of microseconds after
    // the send and reading first nearly always misses; on a busy one (more runnable threads than
    // cores: the send wakes the backend, which takes this thread's core) it nearly always finds
    // it. The score walks up on a find and down on a miss, so it drifts towards reading first
    // exactly when that finds the reply over half the time; below the middle, every 16th
    // statement still reads first, to notice when the machine gets busy.
    constexpr std::uint8_t kScoreMax = 16;
    // Cleared once that first read is done: the loop's later turns always poll first.
    bool read_pending = session.read_first_score_ >= kScoreMax / 2 || (++session.read_first_probe_ & 15U) == 0;
    for (;;) {
        if (!session.conn_) return attempt;
        bool done = false;
        while (!PQisBusy(conn)) {
            PGresult* res = PQgetResult(conn);
            if (!res) {
                done = true;
                break;
            }
            attempt.result = Result(res);
        }
        if (done) break;
        if (read_pending) {
            read_pending = false;
            if (!consume()) return attempt;
            if (!PQisBusy(conn)) {
                if (session.read_first_score_ < kScoreMax) ++session.read_first_score_;
                continue;
            }
            if (session.read_first_score_ > 0) --session.read_first_score_;
        }
        const Wake w = wait_socket(PQsocket(conn), POLLIN, cancel_sent ? -1 : wake_fd, ctx,
                                   cancel_sent ? std::nullopt : ctx.deadline, cancel_limit);
        if (w == Wake::stop && !cancel_sent) {
            interrupt(Interrupt::stop);
        } else if (w == Wake::deadline && !cancel_sent) {
            interrupt(Interrupt::deadline);
        } else if (w == Wake::timeout) {
            return abandon();
        } else if (w == Wake::ready && !consume()) {
            return attempt;
        }
    }
    // A statement that completed after an earlier cancel request has absorbed it: the server
    // raised the signal before that request's PQcancel() returned, so it was handled by the time
    // this statement was read (ignored while idle, or cancelling this very statement).
    if (attempt.interrupt == Interrupt::none) session.cancel_pending_ = false;
    return attempt;
}

Result SessionOps::finish(Session& session, Attempt attempt) {
    if (attempt.interrupt == Interrupt::stop) {
        throw Error(Errc::canceled, "canceled; the statement was cancelled on the server");
    }
    if (attempt.interrupt == Interrupt::deadline) {
        throw Error(Errc::deadline_exceeded, "deadline exceeded; the statement was cancelled on the server");
    }
    const PGresult* res = attempt.result.native_handle();
    if (!res) {
        throw Error(Errc::connection_failed, libpq_message(session.conn_.get()));
    }
    const ExecStatusType status = PQresultStatus(res);
    if (status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE || status == PGRES_NONFATAL_ERROR) {
        std::string msg = PQresultErrorMessage(res);
        while (!msg.empty() && msg.back() == '\n') msg.pop_back();
        const Errc code = session.ok() ? Errc::query_failed : Errc::connection_failed;
        throw Error(code, msg, sqlstate_of(res));
    }
    return std::move(attempt.result);
}

void SessionOps::prepare(Session& session, const char* name, const char* sql, int nparams, const Oid* types,
                         const Context& ctx) {
    if (std::find(session.prepared_.begin(), session.prepared_.end(), name) != session.prepared_.end()) return;
    const std::string text = with_session_names(sql, session);
    auto send = [&](PGconn* conn) { return PQsendPrepare(conn, name, text.c_str(), nparams, types); };
    Attempt attempt = run(session, send, ctx);
    // The statement exists on the server when PREPARE completed, even if the caller's deadline
    // fired meanwhile, or when an earlier such PREPARE did (42P05): remember it either way, or
    // every later use of this session would try to prepare it again and fail.
    const PGresult* res = attempt.result.native_handle();
    if (res && (PQresultStatus(res) == PGRES_COMMAND_OK || sqlstate_of(res) == sqlstate::duplicate_prepared_statement)) {
        session.prepared_.emplace_back(name);
        if (attempt.interrupt == Interrupt::none) return;
    }
    finish(session, std::move(attempt));
    session.prepared_.emplace_back(name);
}

KeyText::KeyText(std::int64_t key) noexcept {
    const auto [end, ec] = std::to_chars(text, text + sizeof text - 1, key);
    *end = '\0';
}

Attempt SessionOps::run_prepared(Session& session, const char* name, const KeyText& key, const Context& ctx) {
    const char* values[1] = {key.text};
    auto send = [&](PGconn* conn) { return PQsendQueryPrepared(conn, name, 1, values, nullptr, nullptr, 0); };
    return run(session, send, ctx);
}

Attempt SessionOps::run_prepared(Session& session, const char* name, const KeyText& key, const char* text,
                                 const Context& ctx) {
    if (!text) return run_prepared(session, name, key, ctx);
    const char* values[2] = {key.text, text};
    auto send = [&](PGconn* conn) { return PQsendQueryPrepared(conn, name, 2, values, nullptr, nullptr, 0); };
    return run(session, send, ctx);
}

Attempt SessionOps::run_prepared(Session& session, const char* name, const KeyText& key, const char* text,
                                 const char* text2, const Context& ctx) {
    if (!text2) return run_prepared(session, name, key, text, ctx);
    if (!text) return run_prepared(session, name, key, text2, ctx);
    const char* values[3] = {key.text, text, text2};
    auto send = [&](PGconn* conn) { return PQsendQueryPrepared(conn, name, 3, values, nullptr, nullptr, 0); };
    return run(session, send, ctx);
}

Session SessionOps::connect(const std::string& conninfo, const Context& ctx,
                            std::chrono::milliseconds attempt_timeout, const Session::Overrides& overrides,
                            const Session::Overrides& defaults) {
    if (ctx.stop.stop_requested()) throw Error(Errc::canceled, "canceled before connecting");
    Session session;
    if (overrides.empty() && defaults.empty()) {
        session.conn_.reset(PQconnectStart(conninfo.c_str()));
    } else {
        // libpq expands the first "dbname" that looks like a conninfo or URI, and of repeated
        // keywords the last one wins: defaults go before the conninfo, overrides after it.
        std::vector<const char*> keys;
        std::vector<const char*> values;
        for (const auto& [key, value] : defaults) {
            keys.push_back(key.c_str());
            values.push_back(value.c_str());
        }
        keys.push_back("dbname");
        values.push_back(conninfo.c_str());
        for (const auto& [key, value] : overrides) {
            keys.push_back(key.c_str());
            values.push_back(value.c_str());
        }
        keys.push_back(nullptr);
        values.push_back(nullptr);
        session.conn_.reset(PQconnectStartParams(keys.data(), values.data(), 1));
    }
    PGconn* conn = session.conn_.get();
    if (!conn) throw Error(Errc::connection_failed, "out of memory");
    // What a failed attempt reports: libpq's words, never a password from the string or the
    // overrides (libpq quotes malformed URIs whole), plus a plain statement for TLS failures.
    auto failure = [&](PGconn* c) {
        std::string extra;
        for (const auto& [key, value] : overrides) {
            if (key == "password") extra = value;
        }
        return Error(Errc::connection_failed, explain_connect_failure(redact_password(libpq_message(c), conninfo, extra)));
    };
    if (PQstatus(conn) == CONNECTION_BAD) {
        // Failing before any network work: the string itself is wrong (say so in the clearer
        // words of conninfo_error) or out of memory.
        if (auto why = conninfo_error(conninfo)) throw Error(Errc::connection_failed, *why);
        throw failure(conn);
    }

    // libpq applies connect_timeout only in its blocking connect; honour it here too. A value in
    // the conninfo (or PGCONNECT_TIMEOUT) wins over the pool's default; 0 there means no limit;
    // like libpq, less than 2 s counts as 2 s.
    std::optional<Clock::time_point> limit;
    if (attempt_timeout.count() > 0) limit = Clock::now() + attempt_timeout;
    if (PQconninfoOption* opts = PQconninfo(conn)) {
        for (PQconninfoOption* o = opts; o->keyword; ++o) {
            if (std::strcmp(o->keyword, "connect_timeout") == 0 && o->val && *o->val) {
                const int seconds = std::atoi(o->val);
                if (seconds <= 0) limit.reset();
                else limit = Clock::now() + std::chrono::seconds(std::max(2, seconds));
            }
        }
        PQconninfoFree(opts);
    }
    const auto started = Clock::now();

    std::optional<std::stop_callback<WakeWriter>> on_stop;
    int wake_fd = -1;
    if (ctx.stop.stop_possible()) {
        session.wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        wake_fd = session.wake_fd_;
        if (wake_fd >= 0) {
            on_stop.emplace(ctx.stop, WakeWriter{wake_fd});
        }
    }

    // The server a timed-out attempt was waiting for, so that the message says which.
    auto where = [conn] {
        const char* host = PQhost(conn);
        const char* port = PQport(conn);
        return std::string(host && *host ? host : "the default host") + (port && *port ? std::string(" port ") + port : std::string());
    };
    PostgresPollingStatusType state = PGRES_POLLING_WRITING;
    while (state != PGRES_POLLING_OK) {
        if (state == PGRES_POLLING_FAILED) throw failure(conn);
        const short events = state == PGRES_POLLING_READING ? POLLIN : POLLOUT;
        switch (wait_socket(PQsocket(conn), events, wake_fd, ctx, ctx.deadline, limit)) {
            case Wake::stop: throw Error(Errc::canceled, "canceled while connecting");
            case Wake::deadline: throw Error(Errc::deadline_exceeded, "deadline exceeded while connecting to " + where());
            case Wake::timeout:
                throw Error(Errc::connection_failed,
                            "timeout expired after " +
                                std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count()) +
                                " ms while connecting to " + where());
            case Wake::ready: break;
        }
        state = PQconnectPoll(conn);
    }
    on_stop.reset();
    if (wake_fd >= 0) {
        std::uint64_t count;
        [[maybe_unused]] auto n = ::read(wake_fd, &count, sizeof count);
    }

    PQsetNoticeReceiver(conn, on_notice, session.fatal_.get());
    if (PQsetnonblocking(conn, 1) != 0) throw Error(Errc::connection_failed, libpq_message(conn));
    session.backend_pid_ = PQbackendPID(conn);
    return session;
}

}  // namespace detail
}  // namespace pglock
