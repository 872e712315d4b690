#include <chrono>
#include <system_error>
#include <thread>
#include <utility>

#include "held.hpp"
#include "pglock/sqlstate.hpp"
#include "pglock/error.hpp"
#include "pglock/lock.hpp"
#include "session_ops.hpp"
#include "watcher.hpp"

namespace pglock {
namespace detail {
Held::Held(std::shared_ptr<const LockImpl> lock_impl, PooledSession&& held_session, int lock_pid,
           const std::string& restore_application_name, std::optional<std::int64_t> token)
    : lock(std::move(lock_impl)),
      backend_pid(lock_pid),
      restore_application_name(restore_application_name),
      fencing_token(token) {
    session = std::move(held_session);  // last: nothing after it can throw
    lock->claim(backend_pid);
    claimed = true;
}

void Held::drop_claim() noexcept {
    if (claimed.exchange(false)) lock->unclaim(backend_pid);
}

Held::~Held() {
    if (!released && session) release();
}

bool Held::start_watching() {
    std::unique_lock guard(mutex, std::try_to_lock);
    if (!guard.owns_lock()) {
        // Leased or being released: a lease's end starts the watch, else the watcher's next try.
        // Never block the watcher thread on a guard's mutex.
        wants_watch = true;
        return false;
    }
    wants_watch = false;
    watch_locked();
    return true;
}

void Held::watch_locked() {
    if (released || watching || lost) return;
    watched_fd = session->socket();
    watch_id = Watcher::instance().watch(watched_fd, shared_from_this());
    watching = watch_id != 0;
}

void Held::stop_watching_locked() noexcept {
    if (!watching) return;
    // A socket libpq already closed has left the epoll set by itself, and its number may belong
    // to another session by now: only a socket that is still this session's is removed.
    const bool still_open = session && session->socket() == watched_fd;
    Watcher::instance().unwatch(watch_id, watched_fd, still_open);
    watching = false;
}

void Held::rearm_locked() noexcept {
    if (watching && session && session->socket() == watched_fd) Watcher::instance().rearm(watch_id, watched_fd);
}

bool Held::on_readable(std::uint64_t id) {
    std::unique_lock guard(mutex, std::try_to_lock);
    if (!guard.owns_lock()) {
        // In use: a lease looks when it ends, and the watcher tries again shortly either way.
        check_pending = true;
        return false;
    }
    if (released || !watching || watch_id != id) return true;
    check_pending = false;
    if (session->check_alive()) {
        rearm_locked();
        return true;
    }
    stop_watching_locked();
    guard.unlock();
    declare_lost();
    return true;
}

bool Held::after_lease() noexcept {
    const bool pending = check_pending.exchange(false);
    const bool alive = session && session->ok() && (!pending || session->check_alive());
    if (alive) {
        if (watching) rearm_locked();
        else if (wants_watch.exchange(false)) watch_locked();
        return true;
    }
    stop_watching_locked();
    return false;
}

void Held::declare_lost() noexcept {
    if (lost.exchange(true)) return;
    drop_claim();
    lock->count_lost();
    lost_source.request_stop();
    if (lock->logs(LogLevel::warn)) {
        lock->log(LogLevel::warn, "lock: lost", {{"pid", std::to_string(backend_pid)}});
    }
    std::vector<std::function<void()>> callbacks;
    {
        std::lock_guard guard(callback_mutex);
        lost_declared = true;
        callbacks.swap(lost_callbacks);
    }
    for (auto& callback : callbacks) {
        try {
            callback();
        } catch (...) {
            // A throwing callback must not take the watcher thread (or the others) down.
        }
    }
}

void Held::add_lost_callback(std::function<void()> callback) {
    {
        std::lock_guard guard(callback_mutex);
        if (!lost_declared) {
            lost_callbacks.push_back(std::move(callback));
            return;
        }
    }
    callback();
}

std::error_code Held::release() noexcept {
    if (leased_here()) return std::make_error_code(std::errc::resource_deadlock_would_occur);
    std::unique_lock guard(mutex);
    if (released) return release_result;
    released = true;
    stop_watching_locked();

    const double held_seconds = std::chrono::duration<double>(Clock::now() - acquired_at).count();
    std::error_code result;
    std::string failure;
    bool session_died = false;
    int changed_pid = 0;
    if (lost || !session->ok()) {
        result = make_error_code(Errc::lock_lost);
        failure = "the session holding the lock had died";
        session_died = true;
        session.discard();
    } else {
        const Clock::time_point bound = Clock::now() + kCleanupTimeout;
        try {
            const Statements& st = statements_of(*lock);
            // Unlocks and, when the lock named its holder, gives the session its own name back.
            const char* restore = lock->names_holder ? restore_application_name.c_str() : nullptr;
            Result res = [&] {
                // Nobody can stop a release: past the bound the session is closed, which drops
                // the lock. (Scoped to the statements: the session may be gone right after.)
                const SessionOps::CloseAfter limit(*session, bound);
                const Context none{};
                SessionOps::prepare(*session, st.unlock_name, st.unlock_sql, restore ? 2 : 1, nullptr, none);
                return SessionOps::finish(*session, SessionOps::run_prepared(*session, st.unlock_name, lock->key_text, restore, none));
            }();
            if (const int pid = statement_pid(res); pid != backend_pid) {
                // Behind a transaction-mode pooler: the unlock reached another backend, and the
                // lock most likely stays on backend_pid, now serving other clients.
                result = make_error_code(Errc::session_changed);
                failure = "the unlock ran on backend " + std::to_string(pid) + ", the lock was taken on backend " +
                          std::to_string(backend_pid) +
                          ": a transaction-mode pooler sits between this client and the server, so the lock may "
                          "still be held by backend " + std::to_string(backend_pid);
                changed_pid = pid;
                session.discard();
            } else if (res.is_null(0, 0)) {
                // Same backend number, but without this connection's marker: a pooler handed the
                // backend to another client in between, and nothing was unlocked there.
                result = make_error_code(Errc::session_changed);
                failure = "the unlock reached backend " + std::to_string(pid) +
                          " without this connection's marker: a pooler lends that backend to other clients too, so "
                          "the lock may still be held there; nothing was unlocked";
                changed_pid = pid;
                session.discard();
            } else if (res.get_bool(0, 0)) {
                SessionOps::took_no_advisory_lock(*session);  // the unlock statement dropped them all
                session.reset();  // back to the pool, lock-free
            } else {
                result = make_error_code(Errc::release_failed);
                failure = "pg_advisory_unlock returned false: the session did not hold the lock";
                session.discard();
            }
        } catch (const Error& e) {
            // The lock may still be on this session: closing it is the only way to be sure it goes.
            result = make_error_code(Errc::release_failed);
            failure = e.what();
            if (e.sqlstate() == sqlstate::invalid_sql_statement_name) {
                // The unlock statement this session prepared is unknown to the backend that got
                // it: a transaction-mode pooler moved the session to another backend.
                result = make_error_code(Errc::session_changed);
                failure = "the unlock statement reached a backend that never saw it prepared: a transaction-mode "
                          "pooler sits between this client and the server, so the lock may still be held by backend " +
                          std::to_string(backend_pid);
                changed_pid = -1;
            }
            // A session closed here because the server did not answer within the bound did not
            // die under the lock: the unlock failed (and the lock goes when the server notices).
            const bool closed_at_bound = e.code() == Errc::connection_failed && Clock::now() >= bound;
            session_died = !session->ok() && !closed_at_bound;
            if (session_died && changed_pid == 0) {
                // The session died before or during the unlock: the lock went with it.
                result = make_error_code(Errc::lock_lost);
                failure = "the session holding the lock had died";
            }
            session.discard();
        } catch (const std::exception& e) {
            result = make_error_code(Errc::release_failed);
            failure = e.what();
            session_died = !session->ok();
            session.discard();
        }
    }
    release_result = result;
    release_done = true;
    guard.unlock();
    drop_claim();
    Watcher::instance().forget_pending(*this);  // a short hold leaves nothing behind in the watcher

    if (session_died) declare_lost();
    lock->observe_hold(held_seconds);
    if (!result) {
        if (lock->logs(LogLevel::debug)) {
            lock->log(LogLevel::debug, "lock: released",
                      {{"held_ms", std::to_string(static_cast<long long>(held_seconds * 1000.0))}});
        }
    } else if (changed_pid != 0) {
        lock->session_changed(backend_pid, changed_pid);
    } else if (lock->logs(LogLevel::warn)) {
        lock->log(LogLevel::warn, "lock: release failed", {{"err", failure}});
    }
    return result;
}

}  // namespace detail

// ---- SessionLease ----------------------------------------------------------------------------

SessionLease::SessionLease(std::shared_ptr<detail::Held> held, Session* session) noexcept
    : held_(std::move(held)), session_(session) {}

SessionLease::SessionLease(SessionLease&& other) noexcept
    : held_(std::move(other.held_)), session_(std::exchange(other.session_, nullptr)) {}

SessionLease::~SessionLease() {
    if (!held_) return;
    const bool alive = held_->after_lease();
    const bool release = std::exchange(held_->release_after_lease, false);
    held_->lease_thread = std::thread::id{};
    held_->mutex.unlock();
    if (!alive) held_->declare_lost();
    if (release) held_->release();
}

// ---- Guard -----------------------------------------------------------------------------------

namespace {
// The Guard is going away: release now, or, when this very thread holds the session() lease
// (a release would wait for itself), as soon as that lease ends.
void release_or_defer(detail::Held& held) noexcept {
    if (held.leased_here()) {
        held.release_after_lease = true;  // the lease holds the mutex, on this thread
        return;
    }
    held.release();
}
}  // namespace

Guard& Guard::operator=(Guard&& other) noexcept {
    if (this != &other) {
        if (held_) release_or_defer(*held_);
        held_ = std::move(other.held_);
    }
    return *this;
}

Guard::~Guard() {
    if (held_) release_or_defer(*held_);
}

std::error_code Guard::release() noexcept {
    if (!held_) return make_error_code(Errc::release_failed);
    return held_->release();
}

bool Guard::released() const noexcept {
    // Without the mutex: a health check polling this must never hold up the watcher (or
    // wait for a lease of its own thread).
    return !held_ || held_->release_done.load();
}

bool Guard::lost() const noexcept { return held_ && held_->lost.load(); }

std::stop_token Guard::lost_token() const noexcept { return held_ ? held_->lost_source.get_token() : std::stop_token{}; }

void Guard::on_lost(std::function<void()> callback) {
    if (held_ && callback) held_->add_lost_callback(std::move(callback));
}

SessionLease Guard::session() {
    if (!held_) throw Error(Errc::release_failed, "the guard is empty (moved from)");
    if (held_->leased_here()) {
        throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur),
                                "session(): this thread already holds this guard's session lease");
    }
    held_->mutex.lock();
    if (held_->released) {
        held_->mutex.unlock();
        throw Error(Errc::release_failed, "the lock was released; its session is gone");
    }
    if (held_->lost || !held_->session->ok()) {
        held_->mutex.unlock();
        throw Error(Errc::lock_lost, "the session holding the lock died");
    }
    held_->lease_thread = std::this_thread::get_id();
    return SessionLease(held_, &*held_->session);
}

const std::string& Guard::name() const noexcept { return held_->lock->name; }
std::int64_t Guard::key() const noexcept { return held_->lock->key; }
Mode Guard::mode() const noexcept { return held_->lock->options.mode; }
int Guard::backend_pid() const noexcept { return held_->backend_pid; }
Clock::time_point Guard::acquired_at() const noexcept { return held_->acquired_at; }
std::optional<std::int64_t> Guard::fencing_token() const noexcept {
    return held_ ? held_->fencing_token : std::nullopt;
}

}  // namespace pglock
