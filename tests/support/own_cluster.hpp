// A PostgreSQL cluster owned by one test: tests/pg/cluster starts it in a temp dir of its own, the
// test reconfigures it (TLS, password authentication) and restarts it, and the destructor stops it
// and removes the dir. Unlike the shared fixture cluster, a test may change anything here.
// The postgres superuser keeps trust over the unix socket: the test's own administration path.
// A test that crashes never runs the destructor, so each cluster is also listed in
// BUILD_DIR/own-clusters/ until it is stopped; `tests/pg/fixture cleanup` (ctest's cleanup
// fixture `own_clusters`, and scripts/test on exit) stops whatever is still listed there.
#pragma once

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QProcess>
#include <QString>
#include <QStringList>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "pg_test_env.hpp"

namespace pglock::test {

// Runs a program to completion; throws with its output when it fails. Returns stdout.
inline std::string run_program(const QString& program, const QStringList& args, const QString& cwd = {}) {
    QProcess p;
    if (!cwd.isEmpty()) p.setWorkingDirectory(cwd);
    p.start(program, args);
    if (!p.waitForStarted(10000)) throw std::runtime_error("cannot start " + program.toStdString());
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        throw std::runtime_error(program.toStdString() + " " + args.join(QLatin1Char(' ')).toStdString() + " failed: " +
                                 p.readAllStandardError().toStdString() + p.readAllStandardOutput().toStdString());
    }
    return p.readAllStandardOutput().toStdString();
}

class OwnCluster {
public:
    OwnCluster() {
        std::string tmpl = "/tmp/pglock-own.XXXXXX";  // not under the build dir: postgres must reach it
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        dir_ = tmpl;
        register_dir();
        const std::string dsn = run_program(QString::fromStdString(cluster_script()), {"start", QString::fromStdString(dir_)});
        const auto at = dsn.find("port=");
        if (at == std::string::npos) throw std::runtime_error("cluster start printed no port: " + dsn);
        port_ = std::stoi(dsn.substr(at + 5));
    }
    ~OwnCluster() {
        try {
            run_program(QString::fromStdString(cluster_script()), {"stop", QString::fromStdString(dir_)});
        } catch (...) {
        }
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
        std::filesystem::remove(marker(), ec);
    }
    OwnCluster(const OwnCluster&) = delete;
    OwnCluster& operator=(const OwnCluster&) = delete;

    const std::string& dir() const { return dir_; }
    std::string data() const { return dir_ + "/data"; }
    int port() const { return port_; }
    // The superuser over the unix socket, which stays trusted whatever the test does to TCP.
    std::string admin_dsn() const {
        return "host=" + dir_ + " port=" + std::to_string(port_) + " user=postgres dbname=postgres";
    }

    // Writes a file into the data dir, owned by the server's user (as root, that is postgres)
    // with the given mode: the server refuses a private key anyone else can read.
    void write_data_file(const std::string& name, const std::string& content, mode_t mode = 0600) const {
        const std::string path = data() + "/" + name;
        {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out << content;
            if (!out) throw std::runtime_error("cannot write " + path);
        }
        give_to_server(path);
        if (::chmod(path.c_str(), mode) != 0) throw std::runtime_error("chmod " + path);
    }
    // Settings appended to postgresql.conf (the last mention of a setting wins).
    void append_conf(const std::string& lines) const {
        std::ofstream out(data() + "/postgresql.conf", std::ios::app);
        out << "\n" << lines << "\n";
    }
    void set_hba(const std::string& lines) const { write_data_file("pg_hba.conf", lines, 0600); }
    void restart() const { run_program(QString::fromStdString(cluster_script()), {"restart", QString::fromStdString(dir_)}); }
    // An immediate stop and a start: what the server sees after a crash (it runs crash recovery).
    void crash() const { run_program(QString::fromStdString(cluster_script()), {"crash", QString::fromStdString(dir_)}); }

    // A hot standby streaming from this cluster (in dir()/standby, also listening on 127.0.0.1);
    // the destructor stops it with the primary. Returns its port.
    int start_standby() {
        const std::string dsn = run_program(QString::fromStdString(cluster_script()), {"standby", QString::fromStdString(dir_)});
        const auto at = dsn.find("port=");
        if (at == std::string::npos) throw std::runtime_error("cluster standby printed no port: " + dsn);
        standby_port_ = std::stoi(dsn.substr(at + 5));
        return standby_port_;
    }
    int standby_port() const { return standby_port_; }
    // The two halves of a failover: the standby becomes a primary (returns once it accepts
    // writes), and the primary goes away, `mode` "fast" (sessions are told) or "immediate" (a
    // crash: backends are killed).
    void promote_standby() const {
        run_program(QString::fromStdString(cluster_script()), {"promote", QString::fromStdString(dir_)});
    }
    void halt_primary(const QString& mode) const {
        run_program(QString::fromStdString(cluster_script()), {"halt", QString::fromStdString(dir_), mode});
    }

private:
    // BUILD_DIR/own-clusters/<dir's name>, holding the dir: the sweep's list.
    std::string marker() const {
        return std::string(PGLOCK_TEST_BUILD_DIR) + "/own-clusters/" + std::filesystem::path(dir_).filename().string();
    }
    void register_dir() const {
        std::error_code ec;
        std::filesystem::create_directories(std::string(PGLOCK_TEST_BUILD_DIR) + "/own-clusters", ec);
        std::ofstream(marker()) << dir_ << "\n";
    }
    static void give_to_server(const std::string& path) {
        if (::geteuid() != 0) return;
        const passwd* pw = ::getpwnam("postgres");
        if (!pw || ::chown(path.c_str(), pw->pw_uid, pw->pw_gid) != 0) throw std::runtime_error("chown " + path);
    }

    std::string dir_;
    int port_ = 0;
    int standby_port_ = 0;
};

}  // namespace pglock::test
