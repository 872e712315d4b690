// The helper process pglock_claims_holder (tests/cli/claims_holder.cpp), run by the tests of
// ghosts and leaks: it holds two locks with its metrics served, and on "lease" keeps its guards'
// sessions leased (the first guard cannot learn its loss) and takes a third lock behind the
// second guard's back. Killed with the test process; asked to quit at the end of the scope.
#pragma once

#include <sys/prctl.h>

#include <QElapsedTimer>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <csignal>
#include <stdexcept>

namespace pglock::test {

class ClaimsHolder {
public:
    ClaimsHolder(const QString& program, const QString& dsn, const QString& name) {
        proc_.setProgram(program);
        proc_.setArguments({dsn, name});
        proc_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        proc_.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
        proc_.start();
        if (!proc_.waitForStarted(10000)) throw std::runtime_error("cannot start " + program.toStdString());
        const QStringList ready = line().split(QLatin1Char(' '));
        if (ready.size() != 4 || ready[0] != QLatin1String("ready")) throw std::runtime_error("the holder is not ready");
        url_ = ready[1];
        ghostPid_ = ready[2].toInt();
        leakPid_ = ready[3].toInt();
    }
    ~ClaimsHolder() {
        if (proc_.state() == QProcess::NotRunning) return;
        proc_.write("quit\n");
        if (!proc_.waitForFinished(10000)) {
            proc_.kill();
            proc_.waitForFinished(5000);
        }
    }
    ClaimsHolder(const ClaimsHolder&) = delete;
    ClaimsHolder& operator=(const ClaimsHolder&) = delete;

    QString url() const { return url_; }
    int ghostPid() const { return ghostPid_; }  // the backend of NAME.ghost
    int leakPid() const { return leakPid_; }    // the backend of NAME.leak, which takes NAME.extra on "lease"

    // Leases both sessions and takes NAME.extra on the second; returns when that is done.
    void lease() {
        proc_.write("lease\n");
        proc_.waitForBytesWritten(5000);
        if (line() != QLatin1String("leased")) throw std::runtime_error("the holder did not lease");
    }

private:
    QString line(int timeout_ms = 20000) {
        QElapsedTimer t;
        t.start();
        while (!proc_.canReadLine()) {
            if (t.elapsed() > timeout_ms || proc_.state() == QProcess::NotRunning)
                throw std::runtime_error("the holder said nothing in time");
            proc_.waitForReadyRead(50);
        }
        return QString::fromUtf8(proc_.readLine()).trimmed();
    }

    QProcess proc_;
    QString url_;
    int ghostPid_ = 0, leakPid_ = 0;
};

}  // namespace pglock::test
