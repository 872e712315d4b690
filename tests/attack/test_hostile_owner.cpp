// A database owner attacks the operator who looks at its database (CVE-2018-1058's pattern). The
// role "mallory" owns the database "mallorydb" and holds advisory locks there: one named like a
// pglock holder, a waiter behind it, and a holder stuck on a row lock. A superuser then uses every
// front end of the project on that database: pglock status (plain, --tree, --json, --watch), try,
// hold (also fenced), fence init/show, bench, key --sql, demo, the exporter (/metrics and
// /probe), lockscope on each tab (read-only), lockscope taking a lock by hand, and the
// cancel/terminate controller.
//
// First every statement those front ends send is read from the server's log and checked: no
// function, operator, relation or type in it may resolve through search_path. Then mallory
// shadows every function, aggregate, operator, relation and base type of pg_catalog in public
// (tests/attack/shadow_catalog.sql), with extra overloads for the function names the statements
// use, traps the tables the project writes to (pglock_fence, the demo's table) with triggers,
// and puts public before pg_catalog in the database's search_path. A canary statement shows the
// trap works. After the front ends ran again, mallory must still not be a superuser and no
// shadow may have run as anyone but mallory.
#include <QtTest>

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "actions/backend_actions.hpp"
#include "actions/read_only_switch.hpp"
#include "exporter_test_support.hpp"
#include "own_cluster.hpp"
#include "sql_lint.hpp"

using clitest::AsyncConn;
using clitest::RawConn;

namespace {

const std::set<std::string> kOwnTables = {"pglock_fence", "pglock_demo_rows"};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

QString lockscope_path() { return QStringLiteral(LOCKSCOPE_APP_PATH); }

// Statements the server logged for the sessions of user@db, from byte `from` of its log on.
std::vector<std::string> logged_statements(const std::string& log, std::size_t from, const std::string& who) {
    std::vector<std::string> out;
    std::istringstream in(log.substr(std::min(from, log.size())));
    std::string line;
    const std::regex start("^.* \\[\\d+\\] " + who + " (LOG|DETAIL|ERROR|WARNING|STATEMENT|HINT|NOTICE|CONTEXT):  (.*)$");
    const std::regex statement("^(statement|execute [^:]*): (.*)$");
    bool collecting = false;
    while (std::getline(in, line)) {
        std::smatch m;
        if (!line.empty() && line[0] == '\t') {
            if (collecting) out.back() += "\n" + line.substr(1);
            continue;
        }
        collecting = false;
        if (!std::regex_match(line, m, start) || m[1] != "LOG") continue;
        const std::string message = m[2];
        std::smatch s;
        if (std::regex_match(message, s, statement)) {
            out.push_back(s[2]);
            collecting = true;
        }
    }
    return out;
}

// The function names a statement calls, as the lint reads them (qualified or not).
std::set<std::string> called_functions(const std::string& sql) {
    std::set<std::string> names;
    const auto t = sqllint::tokenize(sql);
    for (std::size_t k = 0; k + 1 < t.size(); ++k) {
        if (t[k].kind == sqllint::Token::word && t[k + 1].kind == sqllint::Token::punct && t[k + 1].text == "(" &&
            !sqllint::syntax_word(t[k].text))
            names.insert(t[k].text);
    }
    return names;
}

// Runs a script of several statements (the simple query protocol) as one string.
void exec_script(const QString& conninfo, const std::string& sql) {
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(conninfo.toUtf8().constData()), &PQfinish);
    if (PQstatus(conn.get()) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn.get()));
    std::unique_ptr<PGresult, decltype(&PQclear)> res(PQexec(conn.get(), sql.c_str()), &PQclear);
    const auto status = PQresultStatus(res.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        throw std::runtime_error("script failed: " + std::string(PQerrorMessage(conn.get())));
}

std::string quote_literal(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

}  // namespace

class TestHostileOwner : public QObject {
    Q_OBJECT

    std::unique_ptr<pglock::test::OwnCluster> cluster_;
    QString victim_;      // the superuser, in mallory's database
    QString mallory_;     // mallory, in her database
    std::string log_path_;
    std::set<std::string> functions_used_;
    QStringList printed_findings_;  // SQL the front ends print for an operator to run
    // mallory's sessions: a named holder that also holds a row lock, a waiter behind it, and a
    // holder of another key stuck behind the row lock.
    std::unique_ptr<RawConn> holder_;
    std::unique_ptr<AsyncConn> waiter_, chained_;
    QTemporaryDir scratch_;

    std::unique_ptr<RawConn> admin() { return std::make_unique<RawConn>(QString::fromStdString(cluster_->admin_dsn())); }

    std::size_t log_size() const { return read_file(log_path_).size(); }

    void start_mallorys_locks() {
        // A backend blocked on a lock notices its client's disconnect only once granted: end the
        // old ones first, so that the new ones queue in a known order.
        waiter_.reset();
        chained_.reset();
        holder_.reset();
        auto admin_conn = admin();
        admin_conn->query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'mallory'");
        QVERIFY(clitest::eventually(
            [&] { return admin_conn->scalar("SELECT count(*) FROM pg_stat_activity WHERE usename = 'mallory'") == "0"; }));
        holder_ = std::make_unique<RawConn>(mallory_);
        holder_->query("SELECT pg_catalog.set_config('application_name', 'mallory-app pglock:mallory.held', false)");
        holder_->query("SELECT pg_catalog.pg_advisory_lock($1::pg_catalog.int8)",
                       {std::to_string(pglock::key_of("mallory.held"))});
        holder_->query("BEGIN");
        holder_->query("SELECT id FROM public.jobs WHERE id OPERATOR(pg_catalog.=) 1 FOR UPDATE");
        waiter_ = std::make_unique<AsyncConn>(mallory_);
        waiter_->send("SELECT pg_catalog.pg_advisory_lock(" + std::to_string(pglock::key_of("mallory.held")) + ")");
        chained_ = std::make_unique<AsyncConn>(mallory_);
        // Query text outside Latin-1: see the database's client_encoding below.
        chained_->send("SELECT pg_catalog.pg_advisory_lock(" + std::to_string(pglock::key_of("mallory.chained")) +
                       "); UPDATE public.jobs SET id = 1 WHERE id OPERATOR(pg_catalog.=) 1 /* \u2713 */");
        auto a = admin();
        const bool waiting = clitest::eventually([&] {
            return a->scalar("SELECT count(*) FROM pg_stat_activity WHERE usename = 'mallory' AND wait_event_type = 'Lock'") ==
                   "2";
        });
        if (!waiting) {
            for (const auto& row : a->query("SELECT pid, state, wait_event_type, wait_event, query FROM pg_stat_activity "
                                            "WHERE usename = 'mallory'"))
                qWarning() << row[0].c_str() << row[1].c_str() << row[2].c_str() << row[3].c_str() << row[4].c_str();
        }
        QVERIFY2(waiting, "mallory's waiter and chained holder are not both waiting");
    }

    // What a superuser does with every front end; `attacked`: mallory's traps are set.
    void use_every_front_end(bool attacked) {
        const QStringList dsn{"--dsn", victim_};
        const auto pglock = [&](QStringList args, int timeout_ms = 60000) {
            return clitest::run(args << dsn, {}, timeout_ms);
        };
        const QByteArray held_key = QByteArray::number(static_cast<qlonglong>(pglock::key_of("mallory.held")));
        for (const QStringList& args : {QStringList{"status"}, QStringList{"status", "--tree"},
                                        QStringList{"status", "--json"}}) {
            const auto r = pglock(args);
            QVERIFY2(r.code == 0, qPrintable(args.join(' ') + ": " + r.err));
            QVERIFY2(r.out.contains(held_key) || r.out.contains("mallory.held"), qPrintable(args.join(' ') + ": " + r.out));
        }
        {
            // The times read back are the server's, whatever the database's output settings.
            const auto r = pglock({"status", "--json"});
            const QJsonObject status = QJsonDocument::fromJson(r.out).object();
            const double now = status.value("server_now").toDouble();
            QVERIFY2(std::abs(now - double(QDateTime::currentSecsSinceEpoch())) < 3600, r.out.constData());
            int waits = 0;
            for (const auto lock : status.value("locks").toArray()) {
                for (const auto w : lock.toObject().value("waiters").toArray()) {
                    const double start = w.toObject().value("wait_start").toDouble();
                    QVERIFY2(start <= now && now - start < 600, r.out.constData());
                    ++waits;
                }
            }
            QVERIFY2(waits >= 1, r.out.constData());
        }
        {
            clitest::Cli watch(QStringList{"status", "--watch", "250ms", "--json"} << dsn);
            QVERIFY(watch.wait_stdout(QRegularExpression("mallory\\.held(.|\\n)*mallory\\.held")).hasMatch());
            watch.terminate();
            QVERIFY(watch.wait_finished(10000));
        }
        const auto contended = pglock({"try", "mallory.held"});
        QVERIFY2(contended.code == 3, contended.err.constData());
        QVERIFY2(pglock({"try", "victim.free"}).code == 0, "try of a free lock");
        QVERIFY2(pglock({"hold", "victim.hold", "--for", "200ms"}).code == 0, "hold");
        QVERIFY2(pglock({"bench", "--clients", "1", "--seconds", "0.3", "--samples", "3"}).code == 0, "bench");
        const auto key_sql = clitest::run({"key", "--sql", "mallory.held"});
        QCOMPARE(key_sql.code, 0);
        // What an operator copies into psql, connected as the same superuser.
        for (const auto& f : sqllint::unqualified_names(key_sql.out.toStdString()))
            printed_findings_ << QString::fromStdString("pglock key --sql: " + f.what + "  in: " + f.where);

        const auto init = pglock({"fence", "init"});
        if (attacked) QVERIFY2(init.code == 1 && init.err.contains("owned by mallory"), init.err.constData());
        else QVERIFY2(init.code == 0, init.err.constData());
        const auto show = pglock({"fence", "show", "victim.fenced"});
        QVERIFY2(show.code == 0, show.err.constData());
        const auto fenced = pglock({"hold", "victim.fenced", "--fence", "--for", "200ms"});
        if (attacked) {
            // mallory's table: its trigger would run as the superuser who writes to it
            QVERIFY2(fenced.code == 1 && fenced.err.contains("mallory"), fenced.err.constData());
        } else {
            QVERIFY2(fenced.code == 0, fenced.err.constData());
        }
        const auto demo = pglock({"demo", "--for", "3s"}, 90000);
        if (attacked) QVERIFY2(demo.code == 1 && demo.err.contains("mallory"), demo.err.constData());
        else QVERIFY2(demo.code == 0, demo.err.constData());

        {
            clitest::Exporter single(QStringList{"exporter"} << dsn);
            const auto page = single.get("/metrics");
            QVERIFY2(page.status == 200 && page.body.contains("pglock_up 1"), page.body.constData());
            const QString config = scratch_.filePath("targets.conf");
            QFile f(config);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("mallory = " + victim_.toUtf8() + "\n");
            f.close();
            clitest::Exporter fleet(QStringList{"exporter", "--config", config});
            const auto probe = fleet.get("/probe?target=mallory");
            QVERIFY2(probe.status == 200 && probe.body.contains("pglock_up 1"), probe.body.constData());
        }

        for (const char* tab : {"locks", "tree", "timeline", "histogram", "history", "metrics", "fleet", "session",
                                "mylocks", "resolver", "catalog"}) {
            QProcess app;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("QT_QPA_PLATFORM", "offscreen");
            env.insert("HOME", scratch_.path());
            env.insert("XDG_CONFIG_HOME", scratch_.filePath("config"));
            env.insert("XDG_DATA_HOME", scratch_.filePath("data"));
            app.setProcessEnvironment(env);
            app.start(lockscope_path(), {"--dsn", victim_, "--read-only", "--tab", tab, "--screenshot",
                                         scratch_.filePath(QString("%1.png").arg(tab)), "--screenshot-delay", "1200"});
            QVERIFY2(app.waitForFinished(60000) && app.exitCode() == 0, qPrintable(QString(tab) + ": " + app.readAllStandardError()));
        }
        {
            // The lock controller: lockscope takes a lock by hand (not read-only).
            QProcess app;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("QT_QPA_PLATFORM", "offscreen");
            env.insert("HOME", scratch_.path());
            app.setProcessEnvironment(env);
            app.start(lockscope_path(), {"--dsn", victim_, "--take", "try:victim.by-hand", "--take", "shared:victim.shared",
                                         "--tab", "mylocks", "--screenshot", scratch_.filePath("take.png"),
                                         "--screenshot-delay", "2000"});
            QVERIFY2(app.waitForFinished(60000) && app.exitCode() == 0, app.readAllStandardError().constData());
        }
        {
            // Cancel and terminate from the window's controller, and the impact read before them.
            lockscope::ReadOnlySwitch read_only;
            lockscope::BackendActions actions(read_only);
            actions.setConnection(victim_);
            QSignalSpy impact(&actions, &lockscope::BackendActions::impactLoaded);
            QSignalSpy done(&actions, &lockscope::BackendActions::finished);
            QVERIFY(actions.loadImpact(holder_->pid()).accepted());
            QVERIFY(impact.wait(15000));
            QVERIFY2(impact.at(0).at(2).toString().isEmpty(), qPrintable(impact.at(0).at(2).toString()));
            QVERIFY(actions.cancelQuery(waiter_->pid()).accepted());
            QVERIFY(done.wait(15000));
            QVERIFY2(done.at(0).at(2).toBool(), qPrintable(done.at(0).at(3).toString()));
        }
    }

private slots:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        cluster_ = std::make_unique<pglock::test::OwnCluster>();
        log_path_ = cluster_->dir() + "/server.log";
        auto a = admin();
        a->query("ALTER SYSTEM SET log_line_prefix = '%m [%p] %u@%d '");
        a->query("SELECT pg_reload_conf()");
        a->query("CREATE ROLE mallory LOGIN");
        a->query("CREATE DATABASE mallorydb OWNER mallory");
        a->query("ALTER ROLE postgres IN DATABASE mallorydb SET log_statement = 'all'");
        const QString socket = QString::fromStdString("host=" + cluster_->dir() + " port=" + std::to_string(cluster_->port()));
        victim_ = socket + " user=postgres dbname=mallorydb";
        mallory_ = socket + " user=mallory dbname=mallorydb";
        RawConn m(mallory_);
        m.query("CREATE TABLE public.jobs (id integer PRIMARY KEY)");
        m.query("INSERT INTO public.jobs VALUES (1)");
        start_mallorys_locks();
    }

    void cleanupTestCase() {
        waiter_.reset();
        chained_.reset();
        holder_.reset();
        cluster_.reset();
    }

    // Every statement every front end sends names only what pg_catalog holds, or the project's
    // own tables, which are checked before use.
    void every_statement_is_qualified() {
        const std::size_t from = log_size();
        use_every_front_end(false);
        start_mallorys_locks();  // the controller cancelled the waiter
        const auto statements = logged_statements(read_file(log_path_), from, "postgres@mallorydb");
        QVERIFY2(statements.size() > 20, "the server log shows too few statements: is log_statement on?");
        QStringList findings;
        for (const std::string& sql : statements) {
            for (const std::string& f : called_functions(sql)) functions_used_.insert(f);
            for (const auto& f : sqllint::unqualified_names(sql, kOwnTables))
                findings << QString::fromStdString(f.what + "  in: " + f.where + "\n    " + sql.substr(0, 300));
        }
        findings << printed_findings_;
        findings.removeDuplicates();
        for (const QString& f : findings) qWarning().noquote() << f;
        QVERIFY2(findings.isEmpty(), qPrintable(QString("%1 unqualified names in %2 statements (listed above)")
                                                    .arg(findings.size())
                                                    .arg(statements.size())));
    }

    // With everything shadowed, no front end runs mallory's code.
    void shadows_run_nothing() {
        QVERIFY(!functions_used_.empty());
        exec_script(mallory_, "SET search_path = pg_catalog, pg_temp;\n" +
                                  read_file(std::string(PGLOCK_TEST_SOURCE_DIR) + "/tests/attack/shadow_catalog.sql"));
        RawConn m(mallory_);
        m.query("SET search_path = pg_catalog, pg_temp");
        std::string names = "ARRAY[";
        for (const auto& f : functions_used_) names += (names.size() > 6 ? "," : "") + quote_literal(f);
        names += "]::text[]";
        m.query("SELECT public.shadow_overloads(" + names + ")");
        // The tables the project writes to, made by mallory first, each with a trigger.
        m.query("DROP TABLE IF EXISTS public.pglock_fence");
        m.query("CREATE TABLE public.pglock_fence (key bigint PRIMARY KEY, token bigint NOT NULL, name bytea NOT NULL, "
                "updated_at timestamptz NOT NULL DEFAULT now())");
        m.query("CREATE TABLE public.pglock_demo_rows (id int PRIMARY KEY, v bigint NOT NULL DEFAULT 0)");
        m.query("CREATE FUNCTION public.pwn_trigger() RETURNS trigger LANGUAGE plpgsql AS "
                "$$BEGIN PERFORM public.pwn('trigger on ' || TG_TABLE_NAME); RETURN NEW; END$$");
        for (const char* table : {"pglock_fence", "pglock_demo_rows"})
            m.query(std::string("CREATE TRIGGER pwn BEFORE INSERT OR UPDATE ON public.") + table +
                    " FOR EACH ROW EXECUTE FUNCTION public.pwn_trigger()");
        m.query("ALTER DATABASE mallorydb SET search_path = public, pg_catalog");
        // And what an owner may set to make the numbers and the text come out otherwise.
        for (const char* setting : {"extra_float_digits = -15", "standard_conforming_strings = off",
                                    "DateStyle = 'SQL, DMY'", "IntervalStyle = 'sql_standard'",
                                    "TimeZone = 'Pacific/Kiritimati'", "bytea_output = 'escape'",
                                    "client_encoding = 'LATIN1'"})
            m.query(std::string("ALTER DATABASE mallorydb SET ") + setting);

        // The canary: one unqualified statement, as the poll used to send, makes her a superuser.
        auto a = admin();
        {
            const std::size_t before = log_size();
            RawConn victim(victim_);
            victim.query("SELECT array_agg(pid) FROM pg_locks WHERE locktype = 'advisory'");
            QCOMPARE(a->scalar("SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'"), std::string("t"));
            QVERIFY(read_file(log_path_).substr(before).find("PWNED") != std::string::npos);
            a->query("ALTER ROLE mallory NOSUPERUSER");
            RawConn(mallory_).query("TRUNCATE public.ran");
        }

        const std::size_t from = log_size();
        use_every_front_end(true);
        const std::string log = read_file(log_path_).substr(from);
        std::vector<std::string> pwned;
        std::istringstream in(log);
        for (std::string line; std::getline(in, line);)
            if (line.find("PWNED") != std::string::npos) pwned.push_back(line);
        for (const std::string& line : pwned) qWarning().noquote() << QString::fromStdString(line);
        QVERIFY2(pwned.empty(), qPrintable(QString("%1 shadows ran as the superuser (listed above)").arg(pwned.size())));
        QCOMPARE(a->scalar("SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'"), std::string("f"));
        QCOMPARE(RawConn(mallory_).scalar("SELECT pg_catalog.count(*) FROM public.ran"), std::string("0"));
    }
};

QTEST_MAIN(TestHostileOwner)
#include "test_hostile_owner.moc"
