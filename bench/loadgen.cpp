// pglock_loadgen: fills a server with advisory locks and waiters, holds them, then cleans up.
//   pglock_loadgen --dsn DSN [--locks N] [--sessions M] [--waiters W] [--parallel P]
//                  [--prefix P] [--application-name NAME] [--timeout S] [--no-stdin]
// N locks (default 10,000) on the keys of the names "<prefix><i>" (default prefix "loadgen-"),
// spread over M holder sessions (default 1,000), plus W waiter sessions (default 500), each
// blocked in pg_advisory_lock on a key a holder has. Prints "ready" on stdout once pg_locks shows
// all of it, then holds until stdin closes (unless --no-stdin) or SIGINT/SIGTERM; then cancels
// the waiters, closes every session and waits until the server shows none of the locks.
// Progress goes to stderr. Exit 0 after a clean run, 1 on a failure, 2 on bad arguments.
//
// All sessions connect concurrently (up to P handshakes in flight, default 64) through libpq's
// non-blocking connect, so 1,500 connections take about as long as the server needs to fork.
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pglock/key.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
    std::string dsn;
    long locks = 10000;
    long sessions = 1000;
    long waiters = 500;
    long parallel = 64;
    long timeout_s = 300;
    std::string prefix = "loadgen-";
    std::string application_name = "pglock_loadgen";
    bool watch_stdin = true;
};

volatile std::sig_atomic_t g_stop = 0;
int g_signal_pipe[2] = {-1, -1};

extern "C" void on_signal(int) {
    g_stop = 1;
    const char byte = 1;
    [[maybe_unused]] auto n = ::write(g_signal_pipe[1], &byte, 1);
}

struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void progress(const std::string& line) { std::fprintf(stderr, "loadgen: %s\n", line.c_str()); }

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct ConnDeleter {
    void operator()(PGconn* c) const noexcept { PQfinish(c); }
};
using Conn = std::unique_ptr<PGconn, ConnDeleter>;

struct ResultDeleter {
    void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

std::string pg_error(PGconn* c) {
    std::string msg = c ? PQerrorMessage(c) : "out of memory";
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return msg;
}

// A blocking statement on the control session; throws on anything but a tuple result.
ResultPtr query(PGconn* c, const char* sql, std::vector<std::string> params = {}) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    ResultPtr r(PQexecParams(c, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0));
    if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK) throw Failure(std::string("query failed: ") + pg_error(c));
    return r;
}

long get_long(const PGresult* r, int row, int col) { return std::strtol(PQgetvalue(r, row, col), nullptr, 10); }

std::string int_array(const std::vector<long long>& values) {
    std::string out = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(values[i]);
    }
    return out + "}";
}

// Opens `count` sessions with up to `parallel` handshakes in flight; prints progress.
std::vector<Conn> connect_all(const Options& opt, long count, Clock::time_point deadline) {
    const char* keys[] = {"dbname", "application_name", nullptr};
    const char* vals[] = {opt.dsn.c_str(), opt.application_name.c_str(), nullptr};
    std::vector<Conn> conns(static_cast<std::size_t>(count));
    // What PQconnectPoll asked for last, per connection in flight.
    std::vector<PostgresPollingStatusType> wants(conns.size(), PGRES_POLLING_WRITING);
    std::vector<std::size_t> in_flight;
    std::size_t next = 0, done = 0;
    const auto t0 = Clock::now();
    auto last_report = t0;
    while (done < conns.size()) {
        if (g_stop) throw Failure("interrupted while connecting");
        if (Clock::now() > deadline) throw Failure("timed out connecting (" + std::to_string(done) + " of " + std::to_string(count) + " up)");
        while (next < conns.size() && in_flight.size() < static_cast<std::size_t>(opt.parallel)) {
            conns[next].reset(PQconnectStartParams(keys, vals, 1));
            if (!conns[next] || PQstatus(conns[next].get()) == CONNECTION_BAD)
                throw Failure("cannot start a connection: " + pg_error(conns[next].get()));
            in_flight.push_back(next++);
        }
        std::vector<pollfd> fds;
        for (std::size_t i : in_flight) {
            const short events = wants[i] == PGRES_POLLING_READING ? POLLIN : POLLOUT;
            fds.push_back({PQsocket(conns[i].get()), events, 0});
        }
        if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) throw Failure("poll failed");
        std::vector<std::size_t> still;
        for (std::size_t k = 0; k < in_flight.size(); ++k) {
            const std::size_t i = in_flight[k];
            if (fds[k].revents == 0) {
                still.push_back(i);
                continue;
            }
            wants[i] = PQconnectPoll(conns[i].get());
            if (wants[i] == PGRES_POLLING_FAILED) throw Failure("connection " + std::to_string(i) + " failed: " + pg_error(conns[i].get()));
            if (wants[i] == PGRES_POLLING_OK) {
                ++done;
            } else {
                still.push_back(i);
            }
        }
        in_flight = std::move(still);
        if (seconds_since(last_report) >= 0.5 || done == conns.size()) {
            last_report = Clock::now();
            char line[128];
            std::snprintf(line, sizeof line, "connected %zu/%ld (%.1f s)", done, count, seconds_since(t0));
            progress(line);
        }
    }
    return conns;
}

// Waits for every result of the statements sent on `busy`; returns the last result of each.
std::vector<ResultPtr> collect(std::vector<PGconn*> busy, Clock::time_point deadline) {
    std::vector<ResultPtr> out(busy.size());
    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < busy.size(); ++i) pending.push_back(i);
    while (!pending.empty()) {
        if (g_stop) throw Failure("interrupted");
        if (Clock::now() > deadline) throw Failure("timed out waiting for " + std::to_string(pending.size()) + " sessions");
        std::vector<pollfd> fds;
        for (std::size_t i : pending) fds.push_back({PQsocket(busy[i]), POLLIN, 0});
        if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) throw Failure("poll failed");
        std::vector<std::size_t> still;
        for (std::size_t k = 0; k < pending.size(); ++k) {
            const std::size_t i = pending[k];
            PGconn* c = busy[i];
            if (fds[k].revents && PQconsumeInput(c) == 0) throw Failure("session lost: " + pg_error(c));
            while (!PQisBusy(c)) {
                PGresult* r = PQgetResult(c);
                if (!r) break;
                out[i].reset(r);
            }
            if (PQisBusy(c)) still.push_back(i);
        }
        pending = std::move(still);
    }
    return out;
}

// Fails early, with the setting to change, when the server cannot take the load.
void check_capacity(PGconn* control, const Options& opt, long sessions) {
    auto r = query(control,
                   "SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int"
                   " - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'),"
                   " current_setting('max_locks_per_transaction')::int *"
                   " (current_setting('max_connections')::int + current_setting('max_prepared_transactions')::int)");
    const long free_slots = get_long(r.get(), 0, 0);
    const long lock_slots = get_long(r.get(), 0, 1);
    if (free_slots < sessions)
        throw Failure("the server has " + std::to_string(free_slots) + " free connection slots, " + std::to_string(sessions) +
                      " are needed: raise max_connections");
    if (lock_slots < opt.locks + opt.waiters + 1000)
        throw Failure("the server's lock table has room for about " + std::to_string(lock_slots) + " locks, " +
                      std::to_string(opt.locks + opt.waiters) + " are needed: raise max_locks_per_transaction");
}

// Counts (granted, waiting) advisory locks of the given backends.
std::pair<long, long> count_locks(PGconn* control, const std::string& pids) {
    auto r = query(control,
                   "SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT granted) FROM pg_locks"
                   " WHERE locktype = 'advisory' AND pid = ANY($1::int[])",
                   {pids});
    return {get_long(r.get(), 0, 0), get_long(r.get(), 0, 1)};
}

bool hold_until_told(const Options& opt) {
    std::vector<pollfd> fds{{g_signal_pipe[0], POLLIN, 0}};
    if (opt.watch_stdin) fds.push_back({STDIN_FILENO, POLLIN, 0});
    while (!g_stop) {
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (fds.size() > 1 && fds[1].revents) {
            char buf[256];
            const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
            if (n <= 0) return true;  // EOF (or an error): whoever started us is gone
        }
    }
    return true;
}

int run(const Options& opt) {
    const auto t0 = Clock::now();
    const auto deadline = t0 + std::chrono::seconds(opt.timeout_s);
    const long total = opt.sessions + opt.waiters;

    const std::string control_name = opt.application_name + "_control";
    const char* control_keys[] = {"dbname", "application_name", nullptr};
    const char* control_vals[] = {opt.dsn.c_str(), control_name.c_str(), nullptr};
    Conn control(PQconnectdbParams(control_keys, control_vals, 1));
    if (!control || PQstatus(control.get()) != CONNECTION_OK) throw Failure("cannot connect: " + pg_error(control.get()));
    check_capacity(control.get(), opt, total);

    char line[256];
    std::snprintf(line, sizeof line, "%ld locks over %ld sessions, %ld waiters: opening %ld connections, %ld at a time",
                  opt.locks, opt.sessions, opt.waiters, total, opt.parallel);
    progress(line);
    std::vector<Conn> conns = connect_all(opt, total, deadline);
    const double connect_s = seconds_since(t0);
    std::vector<long long> pids;
    for (const auto& c : conns) pids.push_back(PQbackendPID(c.get()));
    const std::string pid_array = int_array(pids);

    // The keys: lock i is the key of "<prefix><i>", held by session i % M.
    std::vector<long long> keys(static_cast<std::size_t>(opt.locks));
    for (long i = 0; i < opt.locks; ++i) keys[static_cast<std::size_t>(i)] = pglock::key_of(opt.prefix + std::to_string(i));

    bool ok = true;
    try {
        // Holders: one statement per session takes all of its keys.
        std::vector<PGconn*> busy;
        std::vector<long> expected;
        for (long s = 0; s < opt.sessions && s < opt.locks; ++s) {
            std::vector<long long> mine;
            for (long i = s; i < opt.locks; i += opt.sessions) mine.push_back(keys[static_cast<std::size_t>(i)]);
            const std::string arr = int_array(mine);
            const char* values[] = {arr.c_str()};
            PGconn* c = conns[static_cast<std::size_t>(s)].get();
            if (!PQsendQueryParams(c, "SELECT count(*) FILTER (WHERE pg_try_advisory_lock(k)) FROM unnest($1::bigint[]) AS k", 1,
                                   nullptr, values, nullptr, nullptr, 0))
                throw Failure("cannot send: " + pg_error(c));
            busy.push_back(c);
            expected.push_back(static_cast<long>(mine.size()));
        }
        const auto results = collect(busy, deadline);
        long taken = 0;
        for (std::size_t i = 0; i < results.size(); ++i) {
            if (!results[i] || PQresultStatus(results[i].get()) != PGRES_TUPLES_OK)
                throw Failure("taking the locks failed: " + pg_error(busy[i]));
            const long got = get_long(results[i].get(), 0, 0);
            if (got != expected[i]) throw Failure("some keys are held by another session (a second loadgen with the same --prefix?)");
            taken += got;
        }
        std::snprintf(line, sizeof line, "%ld locks held (%.1f s)", taken, seconds_since(t0));
        progress(line);

        // Waiters: waiter w blocks on lock w % N, so they wait on different holders' keys. Their
        // results come only when canceled.
        for (long w = 0; w < opt.waiters && opt.locks > 0; ++w) {
            PGconn* c = conns[static_cast<std::size_t>(opt.sessions + w)].get();
            const std::string key = std::to_string(keys[static_cast<std::size_t>(w % opt.locks)]);
            const char* values[] = {key.c_str()};
            if (!PQsendQueryParams(c, "SELECT pg_advisory_lock($1::bigint)", 1, nullptr, values, nullptr, nullptr, 0))
                throw Failure("cannot send: " + pg_error(c));
        }
        const long want_waiting = opt.locks > 0 ? opt.waiters : 0;
        for (;;) {
            const auto [granted, waiting] = count_locks(control.get(), pid_array);
            if (granted == taken && waiting == want_waiting) break;
            if (g_stop) throw Failure("interrupted");
            if (Clock::now() > deadline)
                throw Failure("timed out: pg_locks shows " + std::to_string(granted) + " held, " + std::to_string(waiting) + " waiting");
            ::usleep(100 * 1000);
        }
        std::snprintf(line, sizeof line, "ready: %ld locks held by %ld sessions, %ld waiting (connect %.1f s, total %.1f s)", taken,
                      std::min(opt.sessions, opt.locks), want_waiting, connect_s, seconds_since(t0));
        progress(line);
        std::fputs("ready\n", stdout);
        std::fflush(stdout);
        hold_until_told(opt);
        progress("stopping");
    } catch (const Failure& e) {
        progress(std::string("error: ") + e.what());
        ok = false;
    }

    // Cleanup: cancel the waiters first (they would otherwise be granted a key as its holder
    // goes, and hold it until their own backend notices the closed socket), then close all.
    const auto t_stop = Clock::now();
    std::vector<long long> waiter_pids(pids.begin() + opt.sessions, pids.end());
    try {
        if (!waiter_pids.empty()) query(control.get(), "SELECT count(pg_cancel_backend(p)) FROM unnest($1::int[]) AS p", {int_array(waiter_pids)});
    } catch (const Failure& e) {
        progress(std::string("cancel failed: ") + e.what());
        ok = false;
    }
    conns.clear();
    const auto release_deadline = Clock::now() + std::chrono::seconds(60);
    for (;;) {
        try {
            const auto [granted, waiting] = count_locks(control.get(), pid_array);
            if (granted == 0 && waiting == 0) break;
            if (Clock::now() > release_deadline) {
                progress("the server still shows " + std::to_string(granted + waiting) + " of the locks after 60 s");
                return 1;
            }
        } catch (const Failure& e) {
            progress(std::string("cannot check the release: ") + e.what());
            return 1;
        }
        ::usleep(50 * 1000);
    }
    std::snprintf(line, sizeof line, "released everything (%.1f s)", seconds_since(t_stop));
    progress(line);
    return ok ? 0 : 1;
}

int usage(const std::string& why) {
    std::fprintf(stderr,
                 "pglock_loadgen: %s\n"
                 "usage: pglock_loadgen --dsn DSN [--locks N] [--sessions M] [--waiters W] [--parallel P]\n"
                 "                      [--prefix P] [--application-name NAME] [--timeout S] [--no-stdin]\n",
                 why.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    if (const char* env = std::getenv("PGLOCK_TEST_DSN")) opt.dsn = env;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string_view arg = argv[i];
            if (arg == "--no-stdin") {
                opt.watch_stdin = false;
                continue;
            }
            if (arg == "-h" || arg == "--help") {
                usage("fills a server with advisory locks and waiters until stdin closes or SIGINT/SIGTERM");
                return 0;
            }
            if (i + 1 >= argc) return usage("missing value for " + std::string(arg));
            const std::string value = argv[++i];
            if (arg == "--dsn") opt.dsn = value;
            else if (arg == "--locks") opt.locks = std::stol(value);
            else if (arg == "--sessions") opt.sessions = std::stol(value);
            else if (arg == "--waiters") opt.waiters = std::stol(value);
            else if (arg == "--parallel") opt.parallel = std::stol(value);
            else if (arg == "--timeout") opt.timeout_s = std::stol(value);
            else if (arg == "--prefix") opt.prefix = value;
            else if (arg == "--application-name") opt.application_name = value;
            else return usage("unknown option " + std::string(arg));
        }
    } catch (const std::exception&) {
        return usage("a number was expected");
    }
    if (opt.dsn.empty()) return usage("no --dsn (or PGLOCK_TEST_DSN)");
    if (opt.locks < 0 || opt.sessions < 1 || opt.waiters < 0 || opt.parallel < 1 || opt.timeout_s < 1)
        return usage("--sessions, --parallel and --timeout must be positive, --locks and --waiters not negative");

    // One descriptor per session: lift the soft limit as far as the hard one allows.
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &lim);
    }
    if (::pipe(g_signal_pipe) != 0) return usage("cannot create a pipe");
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    try {
        return run(opt);
    } catch (const std::exception& e) {
        progress(std::string("error: ") + e.what());
        return 1;
    }
}
