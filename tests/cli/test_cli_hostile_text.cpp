// Text a tenant controls, on a cluster of the test's own (hostile_tenant.hpp): its role, database,
// schema and table are named with ESC, BEL, C1 controls, a bidi override, a newline and bytes that
// are not UTF-8, and its sessions make the chain an operator is paged about. Every text path of
// `pglock status` (lock lines, the worst-root line, --tree, --json, --watch), `fence init`, the
// error text of the tenant's RAISE (on stderr and in --verbose's log lines) and a hostile server's
// refusal reach the terminal by the one display rule: valid UTF-8, one line per line, nothing a
// terminal obeys.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <memory>

#include "cli_test_support.hpp"
#include "hostile_server.hpp"
#include "hostile_tenant.hpp"
#include "pglock/key_schemes.hpp"

using namespace clitest;
namespace hostile = pglock::test::hostile;

namespace {

QByteArray bytes(std::string_view s) { return QByteArray(s.data(), qsizetype(s.size())); }
QString q(std::string_view s) { return QString::fromStdString(std::string(s)); }

// The first line of `out` that contains `part`; empty when none.
QByteArray line_with(const QByteArray& out, const QByteArray& part) {
    for (const QByteArray& line : out.split('\n'))
        if (line.contains(part)) return line;
    return {};
}

std::string_view view(const QByteArray& b) { return {b.constData(), std::size_t(b.size())}; }
// For failure messages: the output with its raw bytes written <HH>, never passed to the terminal.
std::string said(const QByteArray& b) { return hostile::inert(view(b)); }

}  // namespace

// Output holds nothing live (hostile_text.hpp); the failure names what and where.
#define EXPECT_INERT(out, what)                                                          \
    do {                                                                                 \
        const std::string live_ = hostile::first_live(view(out));                        \
        QVERIFY2(live_.empty(), (std::string(what) + ": " + live_).c_str());             \
    } while (false)

namespace {

// The message as the rule shows a message: one_line folds its newline into "; " (and the two
// spaces libpq writes after "FATAL:" or "ERROR:" into one).
const QByteArray kShownMessage = R"(ev\x1b[2J\x1b]0;owned\x07|\u009b31m\u0085|\u202eexe.|; |\x9b7m\xff)";

}  // namespace

class TestCliHostileText : public QObject {
    Q_OBJECT
    std::unique_ptr<pglock::test::OwnCluster> cluster_;
    hostile::Tenant tenant_;
    std::int64_t key_ = 0;  // the Rails migration lock of the tenant's database, named after it

    QString operator_dsn() const { return q(tenant_.operator_dsn()); }
    // The relation as the server describes it (format('%I.%I'): quoted), shown by the rule and in JSON.
    QByteArray shown_relation() const {
        const QByteArray one = bytes(hostile::shown_utf8) + bytes(hostile::shown_raw);
        return "relation \"s" + one + "\".\"t" + one + "\"";
    }
    QByteArray json_relation() const {
        const QByteArray one = bytes(hostile::json_utf8) + bytes(hostile::json_raw);
        return "relation \\\"s" + one + "\\\".\\\"t" + one + "\\\"";
    }

private slots:
    void initTestCase() {
        try {
            cluster_ = std::make_unique<pglock::test::OwnCluster>();
            tenant_ = hostile::make_tenant(*cluster_);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        pglock::SchemeContext ctx;
        ctx.database = tenant_.database;
        key_ = pglock::scheme_key("rails-migration", std::nullopt, ctx).packed;
    }

    void status_text_tree_json_and_watch_show_tenant_names_by_the_rule() {
        const hostile::Chain chain(tenant_, key_);
        const QByteArray worst = "worst root: PID " + QByteArray::number(chain.root()) + " (";

        Run text;
        QVERIFY2(eventually([&] {
            text = run({"status", "--dsn", operator_dsn()});
            return text.code == 0 && text.out.contains(worst);
        }, 15000), said(text.err + text.out).c_str());
        EXPECT_INERT(text.out, "status");
        // Prose: the relation, its quotes as the server wrote them, the rest by the rule.
        const QByteArray worst_line = line_with(text.out, worst);
        QVERIFY2(worst_line.contains(" blocks 2 sessions via " + shown_relation() + ", "), said(worst_line).c_str());
        // key=value fields: JSON strings, C1 and bidi included.
        const QByteArray lock_line = line_with(text.out, "key=" + QByteArray::number(qint64(key_)) + " ");
        QVERIFY2(lock_line.contains(" name=\"Rails migration lock for database d" + bytes(hostile::json_utf8) +
                                    "\" from=context scheme=rails-migration "),
                 said(lock_line).c_str());
        const QByteArray holder_line = line_with(text.out, "  holder pid=" + QByteArray::number(chain.holder()) + " ");
        QVERIFY2(holder_line.contains(" user=\"r" + bytes(hostile::json_utf8) + bytes(hostile::json_raw) + "\" "),
                 said(holder_line).c_str());

        const Run tree = run({"status", "--tree", "--dsn", operator_dsn()});
        QCOMPARE(tree.code, 0);
        EXPECT_INERT(tree.out, "status --tree");
        QVERIFY2(line_with(tree.out, worst).contains(shown_relation()), said(tree.out).c_str());
        const QByteArray root_line = line_with(tree.out, "root pid=" + QByteArray::number(chain.root()) + " ");
        QVERIFY2(root_line.endsWith(" via=\"" + json_relation() + "\""), said(root_line).c_str());
        const QByteArray holder_node = line_with(tree.out, "  pid=" + QByteArray::number(chain.holder()) + " ");
        QVERIFY2(holder_node.contains(" for=\"" + json_relation() + "\" mode=AccessShareLock"), said(holder_node).c_str());
        const QByteArray waiter_node = line_with(tree.out, "    pid=" + QByteArray::number(chain.waiter()) + " ");
        QVERIFY2(waiter_node.contains(" for=\"Rails migration lock for database d" + bytes(hostile::json_utf8) + "\" "),
                 said(waiter_node).c_str());

        // --json: valid JSON that still names every byte it can as Unicode (U+FFFD for the rest).
        const Run json = run({"status", "--json", "--dsn", operator_dsn()});
        QCOMPARE(json.code, 0);
        EXPECT_INERT(json.out, "status --json");
        QJsonParseError error;
        const QJsonObject doc = QJsonDocument::fromJson(json.out, &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        const QString relation = QString::fromUtf8(bytes("relation \"s" + hostile::with_raw("") + "\".\"t" + hostile::with_raw("") + "\""));
        bool root_found = false;
        for (const auto& v : doc["roots"].toArray()) {
            if (v.toObject()["pid"].toInt() != chain.root()) continue;
            root_found = true;
            QCOMPARE(v.toObject()["via"].toString(), relation);
        }
        QVERIFY(root_found);
        bool holder_found = false;
        for (const auto& l : doc["locks"].toArray())
            for (const auto& h : l.toObject()["holders"].toArray())
                if (h.toObject()["pid"].toInt() == chain.holder()) {
                    holder_found = true;
                    QCOMPARE(h.toObject()["usename"].toString(), QString::fromUtf8(bytes(tenant_.role)));
                }
        QVERIFY(holder_found);

        // --watch: the same renderers, poll after poll.
        Cli watch({"status", "--watch", "250ms", "--dsn", operator_dsn()});
        QVERIFY(watch.wait_stdout(QRegularExpression(QRegularExpression::escape(QString::fromUtf8(worst)) + "[^\\n]*\\n[\\s\\S]*" +
                                                     QRegularExpression::escape(QString::fromUtf8(worst)))).hasMatch());
        watch.terminate();
        QVERIFY(watch.wait_finished(10000));
        QCOMPARE(watch.exit_code(), 0);
        EXPECT_INERT(watch.out(), "status --watch");
    }

    // The tenant owns its database, so it picks the schema search_path finds first and what is in
    // it: a fencing table whose trigger raises an error of the tenant's own bytes.
    void server_error_text_and_log_lines_show_by_the_rule() {
        {
            pglock::test::PgConn tenant(tenant_.dsn());
            QVERIFY(tenant.ok());
            const std::string fence = hostile::ident(tenant_.schema) + ".pglock_fence";
            const std::string raise = "m" + hostile::with_raw("");
            hostile::exec(tenant, "CREATE TABLE " + fence + " (key bigint PRIMARY KEY, token bigint NOT NULL, "
                                  "name bytea NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())");
            hostile::exec(tenant, "CREATE FUNCTION " + hostile::ident(tenant_.schema) +
                                      ".boom() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION '%', '" + raise +
                                      "'; END$$");
            hostile::exec(tenant, "CREATE TRIGGER boom BEFORE INSERT ON " + fence + " FOR EACH ROW EXECUTE FUNCTION " +
                                      hostile::ident(tenant_.schema) + ".boom()");
            hostile::exec(tenant, "ALTER DATABASE " + hostile::ident(tenant_.database) + " SET search_path = " +
                                      hostile::ident(tenant_.schema) + ", public");
            // A role of plain rights the tenant lets write to the table: its fenced locks use it,
            // and the trigger's error reaches it from the server.
            pglock::test::PgConn op(tenant_.operator_dsn());
            hostile::exec(op, "CREATE ROLE fence_writer LOGIN");
            hostile::exec(tenant, "GRANT USAGE ON SCHEMA " + hostile::ident(tenant_.schema) + " TO fence_writer");
            hostile::exec(tenant, "GRANT SELECT, INSERT, UPDATE ON " + fence + " TO fence_writer");
        }
        const QString writer = operator_dsn().replace(QStringLiteral("user=postgres"), QStringLiteral("user=fence_writer"));

        // The superuser refuses to write to the tenant's table (its trigger would run as
        // superuser) and says so, naming table and owner by the rule.
        const Run init = run({"fence", "init", "--dsn", operator_dsn()});
        QCOMPARE(init.code, 1);
        EXPECT_INERT(init.err, "fence init");
        QVERIFY2(init.err.contains("\\x1b[2J") && init.err.contains(".pglock_fence is owned by r"), said(init.err).c_str());

        // A fenced lock of a role the tenant trusts runs the trigger, whose error comes back from
        // the server.
        const QString name = unique_name("hostile.fence");
        const Run tried = run({"try", name, "--fence", "--dsn", writer});
        QCOMPARE(tried.code, 1);
        QVERIFY2(clean_one_line_error(tried.err), said(tried.err).c_str());
        EXPECT_INERT(tried.err, "try --fence: the server's error");
        QVERIFY2(tried.err.contains("ERROR: m" + kShownMessage), said(tried.err).c_str());

        const Run logged = run({"try", name, "--fence", "--verbose", "--dsn", writer});
        QCOMPARE(logged.code, 1);
        EXPECT_INERT(logged.err, "try --fence --verbose");
        // A log value is quoted: the newline stays an escape inside it, `"` and `\` are backslashed.
        const QByteArray failed = line_with(logged.err, "msg=\"lock: acquire failed\"");
        QVERIFY2(failed.contains("ERROR:  m" + bytes(hostile::shown_utf8) + bytes(hostile::shown_raw)), said(logged.err).c_str());
    }

    // A hostile server refuses the connection with a FATAL of its own bytes: libpq passes them on,
    // and every verb that connects reports them by the rule.
    void a_hostile_servers_refusal_shows_by_the_rule() {
        const hostile::RefusingServer server("m" + hostile::with_raw(""));
        for (const QStringList& args : {QStringList{"status"}, QStringList{"try", unique_name("hostile.refused")},
                                        QStringList{"fence", "show", "x"}}) {
            const Run r = run(args + QStringList{"--dsn", q(server.dsn())});
            const std::string what = args.join(' ').toStdString() + ": " + said(r.err);
            QVERIFY2(r.code == 1, what.c_str());
            QVERIFY2(clean_one_line_error(r.err), what.c_str());
            EXPECT_INERT(r.err, what);
            QVERIFY2(r.err.contains("FATAL: m" + kShownMessage), what.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestCliHostileText)
#include "test_cli_hostile_text.moc"
