// Shared helpers of the CLI tests: run the `pglock` binary (to completion, or in the background
// while reading its lines), a plain libpq session for contending and observing, and a bounded
// poll for conditions.
#pragma once

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QByteArray>
#include <QElapsedTimer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QStringList>
#include <QTcpSocket>
#include <QtTest>

#include <csignal>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pg_test_env.hpp"
#include "pglock/key.hpp"

namespace clitest {

inline QString cli_path() { return QStringLiteral(PGLOCK_CLI_PATH); }

inline QString dsn() {
    const auto d = pglock::test::test_dsn();
    if (!d) throw std::runtime_error("no test server: run through ctest (pg fixture) or set PGLOCK_TEST_DSN");
    return QString::fromStdString(*d);
}

// A lock name of this test process alone, so reruns and leftovers cannot interfere.
inline QString unique_name(const char* what) {
    return QStringLiteral("cli.test.%1.%2").arg(QLatin1String(what)).arg(QCoreApplication::applicationPid());
}

inline std::int64_t key_of(const QString& name) { return pglock::key_of(name.toStdString()); }

// The binary, running in the background; the destructor kills what is still running.
class Cli {
public:
    enum class Stdin { close, keep_open };
    explicit Cli(const QStringList& args, const QByteArray& input = {},
                 const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                 Stdin stdin_mode = Stdin::close) {
        proc_.setProgram(cli_path());
        proc_.setProcessEnvironment(env);
        proc_.setArguments(args);
        // Dies with the test process: a crashed test leaves no pglock behind (a server verb such
        // as `exporter` would otherwise run on).
        proc_.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
        proc_.start();
        if (!proc_.waitForStarted(10000)) throw std::runtime_error("cannot start " + cli_path().toStdString());
        if (!input.isEmpty()) proc_.write(input);
        if (stdin_mode == Stdin::close) proc_.closeWriteChannel();
    }
    ~Cli() {
        if (proc_.state() != QProcess::NotRunning) {
            proc_.kill();
            proc_.waitForFinished(5000);
        }
    }
    Cli(const Cli&) = delete;
    Cli& operator=(const Cli&) = delete;

    // Waits until stdout matches re (returns the match), the process ends, or timeout_ms.
    QRegularExpressionMatch wait_stdout(const QRegularExpression& re, int timeout_ms = 15000) {
        QElapsedTimer t;
        t.start();
        for (;;) {
            pump();
            auto m = re.match(QString::fromUtf8(out_));
            if (m.hasMatch() || proc_.state() == QProcess::NotRunning || t.elapsed() > timeout_ms) return m;
            proc_.waitForReadyRead(20);
        }
    }
    bool wait_finished(int timeout_ms = 30000) {
        const bool done = proc_.state() == QProcess::NotRunning || proc_.waitForFinished(timeout_ms);
        pump();
        return done;
    }
    bool running() const { return proc_.state() != QProcess::NotRunning; }
    int exit_code() const { return proc_.exitCode(); }
    bool crashed() const { return proc_.exitStatus() != QProcess::NormalExit; }
    qint64 pid() const { return proc_.processId(); }
    void terminate() { proc_.terminate(); }  // SIGTERM
    bool signal(int sig) const { return ::kill(pid_t(proc_.processId()), sig) == 0; }
    // With Stdin::keep_open: more input, and its end.
    void write_stdin(const QByteArray& data) {
        proc_.write(data);
        proc_.waitForBytesWritten(5000);
    }
    void close_stdin() { proc_.closeWriteChannel(); }
    const QByteArray& out() {
        pump();
        return out_;
    }
    const QByteArray& err() {
        pump();
        return err_;
    }

private:
    void pump() {
        out_ += proc_.readAllStandardOutput();
        err_ += proc_.readAllStandardError();
    }
    QProcess proc_;
    QByteArray out_, err_;
};

struct Run {
    int code = -1;
    bool crashed = false;
    QByteArray out, err;
};

// Runs the binary to completion.
inline Run run(const QStringList& args, const QByteArray& input = {}, int timeout_ms = 60000,
               const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    Cli cli(args, input, env);
    if (!cli.wait_finished(timeout_ms)) throw std::runtime_error("pglock did not finish in time");
    return {cli.exit_code(), cli.crashed(), cli.out(), cli.err()};
}

// A listening loopback socket that never answers: libpq's connection is accepted (by the kernel,
// then by wait_for_client) and never hears back, a hung server. Closed, its port is one nobody
// listens on.
class SilentServer {
public:
    SilentServer() {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || ::listen(fd_, 16) != 0)
            throw std::runtime_error("cannot listen on loopback");
        port_ = ntohs(addr.sin_port);
    }
    ~SilentServer() {
        close();
        for (int c : clients_) ::close(c);
    }
    SilentServer(const SilentServer&) = delete;
    SilentServer& operator=(const SilentServer&) = delete;

    int port() const { return port_; }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    // Waits until a client has connected (a CLI is then inside its connect) and keeps that
    // connection open without a word. False after timeout_ms.
    bool wait_for_client(int timeout_ms = 15000) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) != 1) return false;
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return false;
        clients_.push_back(c);
        return true;
    }
    // A conninfo for it; connect_timeout long enough that only a signal ends the connect.
    QString dsn() const {
        return QStringLiteral("host=127.0.0.1 port=%1 user=nobody dbname=nothing connect_timeout=60").arg(port_);
    }

private:
    int fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int port_ = 0;
    std::vector<int> clients_;
};

// stderr is one `pglock: ...` line, without the marks of a crash.
inline bool clean_one_line_error(const QByteArray& err) {
    return err.startsWith("pglock: ") && err.count('\n') == 1 && err.endsWith('\n') &&
           !err.contains("terminate called") && !err.contains("Aborted") && !err.contains("what()");
}

// Polls cond every few milliseconds until it holds or timeout_ms passes.
template <class Cond>
bool eventually(Cond cond, int timeout_ms = 10000) {
    QElapsedTimer t;
    t.start();
    while (!cond()) {
        if (t.elapsed() > timeout_ms) return false;
        QTest::qWait(5);
    }
    return true;
}

// A plain libpq session that knows nothing of pglock.
class RawConn {
public:
    explicit RawConn(const QString& conninfo) : conn_(PQconnectdb(conninfo.toUtf8().constData()), &PQfinish) {
        if (PQstatus(conn_.get()) != CONNECTION_OK) throw std::runtime_error("connect: " + error());
    }
    int pid() const { return PQbackendPID(conn_.get()); }
    std::string error() const { return PQerrorMessage(conn_.get()); }

    // All rows of a query, as text.
    std::vector<std::vector<std::string>> query(const std::string& sql, const std::vector<std::string>& params = {}) {
        std::vector<const char*> values;
        for (const auto& p : params) values.push_back(p.c_str());
        std::unique_ptr<PGresult, decltype(&PQclear)> res(
            PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                         nullptr, 0),
            &PQclear);
        const auto status = PQresultStatus(res.get());
        if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) throw std::runtime_error(sql + ": " + error());
        std::vector<std::vector<std::string>> rows;
        for (int r = 0; r < PQntuples(res.get()); ++r) {
            auto& row = rows.emplace_back();
            for (int c = 0; c < PQnfields(res.get()); ++c) row.emplace_back(PQgetvalue(res.get(), r, c));
        }
        return rows;
    }
    std::string scalar(const std::string& sql, const std::vector<std::string>& params = {}) {
        auto rows = query(sql, params);
        if (rows.empty() || rows[0].empty()) throw std::runtime_error(sql + ": no value");
        return rows[0][0];
    }

    void lock(std::int64_t key) { query("SELECT pg_advisory_lock($1::bigint)", {std::to_string(key)}); }
    bool try_lock(std::int64_t key) {
        return scalar("SELECT pg_try_advisory_lock($1::bigint)", {std::to_string(key)}) == "t";
    }
    bool unlock(std::int64_t key) {
        return scalar("SELECT pg_advisory_unlock($1::bigint)", {std::to_string(key)}) == "t";
    }

    // pg_locks rows of the bigint advisory key, as (pid, granted), the way an operator finds them.
    std::vector<std::pair<int, bool>> lock_rows(std::int64_t key) {
        const auto tag = pglock::tag_of(key);
        std::vector<std::pair<int, bool>> out;
        for (const auto& row : query("SELECT pid, granted FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 "
                                     "AND classid = $1::oid AND objid = $2::oid",
                                     {std::to_string(tag.classid), std::to_string(tag.objid)}))
            out.emplace_back(std::stoi(row[0]), row[1] == "t");
        return out;
    }
    int granted_count(std::int64_t key) {
        int n = 0;
        for (auto [pid, granted] : lock_rows(key)) n += granted ? 1 : 0;
        return n;
    }
    int waiting_count(std::int64_t key) {
        int n = 0;
        for (auto [pid, granted] : lock_rows(key)) n += granted ? 0 : 1;
        return n;
    }

private:
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
};

// RawConn of the CLI tests does not expose its PGconn; waiters need an asynchronous statement,
// so they get their own connection.
class AsyncConn {
public:
    explicit AsyncConn(const QString& conninfo) : conn_(PQconnectdb(conninfo.toUtf8().constData()), &PQfinish) {
        if (PQstatus(conn_.get()) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn_.get()));
    }
    int pid() const { return PQbackendPID(conn_.get()); }
    void send(const std::string& sql) {
        if (!PQsendQuery(conn_.get(), sql.c_str())) throw std::runtime_error(PQerrorMessage(conn_.get()));
    }
    bool finish() {
        bool ok = true;
        while (PGresult* r = PQgetResult(conn_.get())) {
            ok = ok && (PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK);
            PQclear(r);
        }
        return ok;
    }
    PGconn* get() const { return conn_.get(); }

private:
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
};

// GET path over a plain socket (curl is not guaranteed on the test machine).
inline QByteArray http_get(quint16 port, const QByteArray& path) {
    QTcpSocket sock;
    sock.connectToHost(QStringLiteral("127.0.0.1"), port);
    if (!sock.waitForConnected(5000)) return {};
    sock.write("GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    QByteArray reply;
    QElapsedTimer t;
    t.start();
    while (sock.state() != QAbstractSocket::UnconnectedState && t.elapsed() < 10000) {
        sock.waitForReadyRead(100);
        reply += sock.readAll();
    }
    return reply + sock.readAll();
}

}  // namespace clitest
