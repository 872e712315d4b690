#include "pglock/pool.hpp"

#include <condition_variable>
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

// See PoolOptions::refuse_transaction_pooler. Plain statements, not prepared ones: behind such a
// pooler a prepared statement would fail with a confusing "does not exist" before this could
// explain why.
void refuse_transaction_pooler(Session& session, const Context& ctx) {
    const auto pid = [&] { return static_cast<int>(session.exec("SELECT pg_backend_pid()", {}, ctx).get_int64(0, 0)); };
    const int first = pid();
    for (int probe = 0; probe < 2; ++probe) {
        if (const int next = pid(); next != first) {
            throw Error(Errc::session_changed,
                        "refusing to work behind a transaction-mode pooler: two consecutive statements on one "
                        "connection ran on backends " + std::to_string(first) + " and " + std::to_string(next) +
                            ", so session-level advisory locks would stay behind on a backend serving someone "
                            "else; connect to PostgreSQL directly or use pool_mode=session");
        }
    }
}

}  // namespace

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
            if (s.options.refuse_transaction_pooler) {
                refuse_transaction_pooler(session, ctx);
                detail::SessionOps::took_no_advisory_lock(session);  // pg_backend_pid() only
            }
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
