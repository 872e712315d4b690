// What the exporter tests share: a running `pglock exporter` and its port, HTTP requests that
// give status and body, a free port, promtool, and a child process that dies with the test.
#pragma once

#include <sys/prctl.h>

#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <csignal>
#include <map>

#include "cli_test_support.hpp"

namespace clitest {

struct HttpReply {
    int status = 0;  // 0: no answer
    QByteArray body;
};

// GET path (raw, query included) over HTTP/1.0; the reply split into status and body.
inline HttpReply http_request(quint16 port, const QByteArray& path) {
    const QByteArray raw = http_get(port, path);
    HttpReply reply;
    const auto head_end = raw.indexOf("\r\n\r\n");
    if (!raw.startsWith("HTTP/1.") || head_end < 0) return reply;
    reply.status = raw.mid(9, 3).toInt();
    reply.body = raw.mid(head_end + 4);
    return reply;
}

// `pglock exporter ARGS --listen 127.0.0.1:0`, with the port it printed.
class Exporter {
public:
    explicit Exporter(QStringList args) : cli_(args << "--listen" << "127.0.0.1:0") {
        const auto m = cli_.wait_stdout(QRegularExpression("exporter: serving https?://127\\.0\\.0\\.1:(\\d+)/"));
        if (!m.hasMatch())
            throw std::runtime_error("exporter did not start: " + cli_.err().toStdString() + cli_.out().toStdString());
        port_ = quint16(m.captured(1).toUInt());
    }
    quint16 port() const { return port_; }
    HttpReply get(const QByteArray& path) { return http_request(port_, path); }
    Cli& cli() { return cli_; }

private:
    Cli cli_;
    quint16 port_ = 0;
};

// The value of the one sample `series` (the exact text before the value, labels included), or
// NaN when the page has no such line.
inline double sample(const QByteArray& page, const QByteArray& series) {
    for (const QByteArray& line : page.split('\n')) {
        if (line.startsWith(series + ' ')) return line.mid(series.size() + 1).toDouble();
    }
    return std::nan("");
}

// The lines of one metric (samples only).
inline QList<QByteArray> samples_of(const QByteArray& page, const QByteArray& metric) {
    QList<QByteArray> out;
    for (const QByteArray& line : page.split('\n')) {
        if (line.startsWith(metric + '{') || line.startsWith(metric + ' ')) out << line;
    }
    return out;
}

// A TCP port nobody listened on a moment ago (for programs that cannot take port 0).
inline quint16 free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        throw std::runtime_error("cannot find a free port");
    ::close(fd);
    return ntohs(addr.sin_port);
}

// A Prometheus tool from the Debian package `prometheus` (scripts/setup installs it), or "" when
// it is not on PATH. Missing is a failure of the test, never a skip: see missing_tool().
inline QString prometheus_tool(const char* name) { return QStandardPaths::findExecutable(QString::fromLatin1(name)); }
inline QByteArray missing_tool(const char* name) {
    return QByteArray(name) + " not found on PATH: install the Debian package prometheus (scripts/setup does)";
}

// `promtool ARGS` with `input` on stdin: (exit code, stdout + stderr); (-1, why) when promtool
// is missing.
inline std::pair<int, QByteArray> promtool(const QStringList& args, const QByteArray& input = {}) {
    const QString tool = prometheus_tool("promtool");
    if (tool.isEmpty()) return {-1, missing_tool("promtool")};
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(tool, args);
    if (!p.waitForStarted(10000)) throw std::runtime_error("cannot start promtool");
    p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished(5000);
        throw std::runtime_error("promtool did not finish in 60 s");
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAll()};
}

// A child process killed when this object goes, and by the kernel when the test process dies
// first (PR_SET_PDEATHSIG), so a crashed test leaves no server behind.
class Child {
public:
    Child(const QString& program, const QStringList& args) {
        proc_.setProgram(program);
        proc_.setArguments(args);
        proc_.setProcessChannelMode(QProcess::MergedChannels);
        proc_.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
        proc_.start();
        if (!proc_.waitForStarted(10000)) throw std::runtime_error("cannot start " + program.toStdString());
    }
    ~Child() {
        if (proc_.state() != QProcess::NotRunning) {
            proc_.kill();
            proc_.waitForFinished(10000);
        }
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    bool running() const { return proc_.state() != QProcess::NotRunning; }
    QByteArray output() {
        out_ += proc_.readAll();
        return out_;
    }

private:
    QProcess proc_;
    QByteArray out_;
};

}  // namespace clitest
