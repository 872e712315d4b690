#include "pglock/pool.hpp"

#include <sys/random.h>

#include <condition_variable>
#include <random>
#include <mutex>
#include <thread>
#include <vector>

#include "pglock/error.hpp"
#include "session_ops.hpp"

namespace pglock {

// What a pool and the sessions it lent share: the pool may go away before the last session comes
// back, so the sessions keep this alive.
struct PooledSession::Shared {
    std::string conninfo;
    PoolOptions options;
    Session::Overrides keepalive_keywords;  // from options.keepalive, made once
    std::mutex mutex;
    std::condition_variable_any freed;
    // An idle session and the thread that gave it back.
    struct Idle {
        Session session;
        std::thread::id last_user;
    };
    std::vector<Idle> idle;  // most recently returned last (warm caches, live sockets)
    std::size_t open = 0;       // idle + lent
    std::size_t waiting = 0;    // acquire() calls blocked for a slot: only then is a notify needed

    // condition_variable_any::notify_one takes an internal mutex every time; on the lock hot path
    // (give back, lend again) nobody waits, so skip it then.
    void wake_one_locked(std::unique_lock<std::mutex>& lock) noexcept {
        const bool someone = waiting > 0;
        lock.unlock();
        if (someone) freed.notify_one();
    }

    void give_back(Session session) noexcept {
        {
            std::unique_lock lock(mutex);
            if (session.reusable()) {
                try {
                    idle.push_back({std::move(session), std::this_thread::get_id()});
                } catch (...) {
                    --open;  // out of memory: drop it
                }
            } else {
                --open;
            }
            wake_one_locked(lock);
        }
        // A session that was not reusable is closed here, outside the mutex.
    }

    // The idle session this thread gave back last, else the one given back last. A thread that
    // takes and gives back in a loop then keeps talking to the same backend: the scheduler keeps
    // the pair on neighbouring cores, where a client thread handed another thread's backend at
    // every lend migrates between cores and both sides run on cold caches. With `mutex` held.
    Session take_idle_locked() {
        const auto me = std::this_thread::get_id();
        auto pick = idle.end() - 1;
        for (auto it = idle.rbegin(); it != idle.rend(); ++it) {
            if (it->last_user == me) {
                pick = std::prev(it.base());
                break;
            }
        }
        Session session = std::move(pick->session);
        idle.erase(pick);
        return session;
    }

    // Marks a new session's backend as this client's; throws Error{session_changed} when it is
    // shared with another client (see the definition).
    void claim(Session& session, const Context& ctx) const;

    void forget_one() noexcept {
        std::unique_lock lock(mutex);
        --open;
        wake_one_locked(lock);
    }
};

PooledSession::PooledSession(std::shared_ptr<Shared> pool, Session session) noexcept
    : pool_(std::move(pool)), session_(std::move(session)) {}

PooledSession& PooledSession::operator=(PooledSession&& other) noexcept {
    if (this != &other) {
        reset();
        pool_ = std::move(other.pool_);
        session_ = std::move(other.session_);
        other.session_.reset();
    }
    return *this;
}

PooledSession::~PooledSession() { reset(); }

void PooledSession::reset() noexcept {
    if (!session_) return;
    Session session = std::move(*session_);
    session_.reset();
    if (!pool_) return;
    // Whatever ran on it may have taken session-level advisory locks; a lock statement's own
    // release drops them in its unlock statement and leaves nothing to do here.
    detail::SessionOps::drop_advisory_locks(session);
    pool_->give_back(std::move(session));
}

void PooledSession::discard() noexcept {
    if (!session_) return;
    session_.reset();  // closes the connection
    if (pool_) pool_->forget_one();
}

Pool::Pool(std::string conninfo, PoolOptions options) : shared_(std::make_shared<PooledSession::Shared>()) {
    if (options.max_size == 0) options.max_size = 1;
    shared_->conninfo = std::move(conninfo);
    shared_->options = options;
    shared_->keepalive_keywords = keepalive_keywords(options.keepalive);
}

Pool::~Pool() = default;

namespace {

// How long the pooler check's second connection may take before the check goes on without it
// (a pool in session mode with no server connection to spare makes it wait in line).
constexpr auto kProbeTimeout = std::chrono::seconds(3);

std::string new_owner_token() {
    unsigned char bytes[16];
    std::size_t got = 0;
    while (got < sizeof bytes) {
        const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    if (got < sizeof bytes) {
        std::random_device rd;
        for (auto& b : bytes) b = static_cast<unsigned char>(rd());
    }
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (const unsigned char b : bytes) {
        out += digits[b >> 4];
        out += digits[b & 0xf];
    }
    return out;
}

// What a backend says of its marker: pglock.owner (nullopt when never set) and its pid.
struct Marker {
    std::optional<std::string> owner;
    int pid = 0;
};

Marker read_marker(Session& session, const Context& ctx) {
    const Result r = session.exec(
        "SELECT pg_catalog.current_setting('pglock.owner', true), pg_catalog.pg_backend_pid()", {}, ctx);
    detail::SessionOps::took_no_advisory_lock(session);
    Marker m;
    if (!r.is_null(0, 0)) m.owner = std::string(r.get(0, 0));
    m.pid = static_cast<int>(r.get_int64(0, 1));
    return m;
}

[[noreturn]] void refuse_shared_backend(const std::string& why) {
    throw Error(Errc::session_changed,
                "refusing to take locks on this connection: " + why +
                    ". Session-level advisory locks need a backend of their own for the whole session: behind "
                    "a transaction-mode pooler, which hands server connections from client to client (PgBouncer "
                    "with pool_mode=transaction or statement, or pool_mode=session without server_reset_query), "
                    "a lock would stay behind for the next client and a second client could be granted it too; "
                    "connect to PostgreSQL directly or use pool_mode=session");
}

}  // namespace

// Marks the backend of a new session as this client's: a random pglock.owner that every lock and
// unlock statement checks (lock.cpp). A backend that already carries a marker is another
// client's. With PoolOptions::refuse_transaction_pooler a second, short-lived connection looks
// for the marker too, and the session reads it back twice: behind a pooler that lends one
// server connection to several clients, the second connection lands on this backend (an idle
// pool gives the one just used back first) or this session's next statements land elsewhere.
void PooledSession::Shared::claim(Session& session, const Context& ctx) const {
    const std::string token = new_owner_token();
    // Set only where no marker is: refusing another client's backend must not take it from that
    // client, whose own statements would then fail on it.
    const Result r = session.exec(
        "SELECT pg_catalog.current_setting('pglock.owner', true), "
        "CASE WHEN COALESCE(pg_catalog.current_setting('pglock.owner', true), '') OPERATOR(pg_catalog.=) '' "
        "THEN pg_catalog.set_config('pglock.owner', $1, false) END, pg_catalog.pg_backend_pid()",
        {token}, ctx);
    detail::SessionOps::took_no_advisory_lock(session);
    const int pid = static_cast<int>(r.get_int64(0, 2));
    if (!r.is_null(0, 0) && !r.get(0, 0).empty()) {
        refuse_shared_backend("its backend (pid " + std::to_string(pid) + ") already carries another client's session");
    }
    detail::SessionOps::set_owner(session, token);
    if (!options.refuse_transaction_pooler) return;
    try {
        Context bounded = ctx;
        const auto limit = Clock::now() + kProbeTimeout;
        if (!bounded.deadline || *bounded.deadline > limit) bounded.deadline = limit;
        Session probe = detail::SessionOps::connect(conninfo, bounded, kProbeTimeout, options.overrides, keepalive_keywords);
        const Marker seen = read_marker(probe, bounded);
        if (seen.owner == token || seen.pid == pid) {
            refuse_shared_backend("a second connection to the same server reached this connection's backend (pid " +
                                  std::to_string(pid) + ")");
        }
        if (seen.owner && !seen.owner->empty()) {
            refuse_shared_backend("a second connection to the same server reached a backend (pid " +
                                  std::to_string(seen.pid) + ") that carries another client's session");
        }
    } catch (const Error& e) {
        if (e.code() == Errc::session_changed) throw;
        if (ctx.stop.stop_requested() || (ctx.deadline && Clock::now() >= *ctx.deadline)) throw;
        // No second connection to be had (max_connections, a full pool): the reads below still
        // catch a pooler that moves this connection between backends.
    }
    for (int round = 0; round < 2; ++round) {
        const Marker again = read_marker(session, ctx);
        if (again.pid != pid || again.owner != token) {
            refuse_shared_backend("two consecutive statements of this connection ran on backends " +
                                  std::to_string(pid) + " and " + std::to_string(again.pid));
        }
    }
}

PooledSession Pool::acquire(const Context& ctx) {
    bool reused = false;
    return lend(ctx, true, reused);
}

PooledSession Pool::lend(const Context& ctx, bool check_idle, bool& reused) {
    auto& s = *shared_;
    for (;;) {
        std::unique_lock lock(s.mutex);
        auto available = [&] { return !s.idle.empty() || s.open < s.options.max_size; };
        if (!available()) {
            ++s.waiting;
            struct Uncount {
                std::size_t& waiting;
                ~Uncount() { --waiting; }  // runs with the lock held again
            } uncount{s.waiting};
            bool got;
            if (ctx.deadline) {
                got = s.freed.wait_until(lock, ctx.stop, *ctx.deadline, available);
            } else {
                got = s.freed.wait(lock, ctx.stop, available);
            }
            if (!got) {
                if (ctx.stop.stop_requested()) throw Error(Errc::canceled, "canceled while waiting for a pooled session");
                throw Error(Errc::deadline_exceeded, "deadline exceeded while waiting for a pooled session");
            }
        }
        if (!s.idle.empty()) {
            Session session = s.take_idle_locked();
            lock.unlock();
            // An idle session whose backend was terminated or whose server restarted has EOF
            // waiting on its socket: seeing it costs a poll, not a round trip. A Lock skips the
            // poll: its first statement finds that out and it takes another session (lock.cpp).
            if (!check_idle || session.check_alive()) {
                reused = true;
                return PooledSession(shared_, std::move(session));
            }
            s.forget_one();
            continue;
        }
        ++s.open;
        lock.unlock();
        reused = false;
        try {
            Session session = detail::SessionOps::connect(s.conninfo, ctx, s.options.connect_timeout, s.options.overrides,
                                                          s.keepalive_keywords);
            s.claim(session, ctx);
            return PooledSession(shared_, std::move(session));
        } catch (...) {
            s.forget_one();
            throw;
        }
    }
}

const std::string& Pool::conninfo() const noexcept { return shared_->conninfo; }
const PoolOptions& Pool::options() const noexcept { return shared_->options; }

std::size_t Pool::open_count() const {
    std::lock_guard lock(shared_->mutex);
    return shared_->open;
}

std::size_t Pool::idle_count() const {
    std::lock_guard lock(shared_->mutex);
    return shared_->idle.size();
}

}  // namespace pglock
