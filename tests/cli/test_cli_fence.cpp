// `pglock fence init|show` and `--fence` on try and hold, in a schema of the test's own (the DSN
// sets search_path), so the first init really creates the table and tokens start at 1.
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "cli_test_support.hpp"

using namespace clitest;

class TestCliFence : public QObject {
    Q_OBJECT

    std::string schema_;
    QString dsn_;  // the test server, search_path = schema_

private slots:
    void initTestCase() {
        schema_ = "cli_fence_" + std::to_string(QCoreApplication::applicationPid());
        RawConn admin(dsn());
        admin.query("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE");
        admin.query("CREATE SCHEMA " + schema_);
        dsn_ = dsn() + QStringLiteral(" options='-c search_path=%1'").arg(QString::fromStdString(schema_));
    }
    void cleanupTestCase() {
        RawConn admin(dsn());
        admin.query("DROP TABLE IF EXISTS " + schema_ + ".pglock_fence");
        admin.query("DROP SCHEMA IF EXISTS " + schema_);
    }

    // Before init: a clear error naming `pglock fence init`, and no lock left behind.
    void without_the_table_try_fence_fails_clearly() {
        const QString name = unique_name("fence.missing");
        const auto r = run({"try", name, "--fence", "--dsn", dsn_});
        QCOMPARE(r.code, 1);
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
        QVERIFY2(r.err.contains("pglock fence init"), r.err.constData());
        QVERIFY2(r.err.contains("42P01"), r.err.constData());
        QCOMPARE(RawConn(dsn()).lock_rows(key_of(name)).size(), std::size_t(0));
        const auto show = run({"fence", "show", name, "--dsn", dsn_});
        QCOMPARE(show.code, 1);
        QVERIFY2(show.err.contains("pglock fence init"), show.err.constData());
    }

    void init_creates_once_then_changes_nothing() {
        const auto first = run({"fence", "init", "--dsn", dsn_});
        QVERIFY2(first.code == 0, first.err.constData());
        QCOMPARE(first.out, QByteArray("created: table " + QByteArray::fromStdString(schema_) +
                                       ".pglock_fence; locks taken with fencing get their tokens from it\n"));
        const auto second = run({"--dsn", dsn_, "fence", "init"});
        QVERIFY2(second.code == 0, second.err.constData());
        QVERIFY2(second.out.startsWith("exists: table " + QByteArray::fromStdString(schema_) + ".pglock_fence"),
                 second.out.constData());
        RawConn admin(dsn());
        QCOMPARE(admin.scalar("SELECT count(*) FROM " + schema_ + ".pglock_fence"), std::string("0"));
    }

    // try --fence and hold --fence print the token; show prints the last one, "none" for a lock
    // that never had one.
    void tokens_printed_and_shown() {
        const QString name = unique_name("fence.tokens");
        const QString other = unique_name("fence.never");
        const auto t1 = run({"try", name, "--fence", "--dsn", dsn_});
        QVERIFY2(t1.code == 0, t1.err.constData());
        QVERIFY2(t1.out.contains(" with fencing token 1 and released"), t1.out.constData());
        const auto h = run({"hold", name, "--fence", "--for", "50ms", "--dsn", dsn_});
        QVERIFY2(h.code == 0, h.err.constData());
        QVERIFY2(h.out.contains(" mode=exclusive token=2; holding for"), h.out.constData());
        const auto plain = run({"try", name, "--dsn", dsn_});  // without --fence: no token taken
        QVERIFY2(!plain.out.contains("fencing token"), plain.out.constData());

        const auto show = run({"fence", "show", name, other, "--dsn", dsn_});
        QVERIFY2(show.code == 0, show.err.constData());
        const QByteArray expected = "\"" + name.toUtf8() + "\" key=" + QByteArray::number(qint64(key_of(name))) +
                                    " token=2\n\"" + other.toUtf8() + "\" key=" +
                                    QByteArray::number(qint64(key_of(other))) + " token=none\n";
        QCOMPARE(show.out, expected);
    }

    // A contended try --fence takes no token.
    void contended_try_takes_no_token() {
        const QString name = unique_name("fence.contended");
        QCOMPARE(run({"try", name, "--fence", "--dsn", dsn_}).code, 0);
        RawConn holder(dsn());
        holder.lock(key_of(name));
        QCOMPARE(run({"try", name, "--fence", "--dsn", dsn_}).code, 3);
        QVERIFY(holder.unlock(key_of(name)));
        const auto r = run({"try", name, "--fence", "--dsn", dsn_});
        QVERIFY2(r.out.contains(" with fencing token 2 and released"), r.out.constData());
    }

    // bench --fence: every acquisition took exactly one token (one untimed pair plus the timed
    // ones; a holder's and a waiter's grant per wake-up sample).
    void bench_with_fencing_counts_one_token_per_grant() {
        const QString prefix = unique_name("fence.bench") + ".";
        const auto r = run({"bench", "--fence", "--clients", "1", "--seconds", "0.3", "--samples", "3", "--json",
                            "--name-prefix", prefix, "--dsn", dsn_});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value("fencing").toBool(), true);
        const qint64 pairs = o.value("pairs").toInteger();
        QVERIFY(pairs > 0);
        const auto show = run({"fence", "show", prefix + "pair.0", prefix + "wake", "--dsn", dsn_});
        QVERIFY2(show.code == 0, show.err.constData());
        QVERIFY2(show.out.contains(" token=" + QByteArray::number(pairs + 1) + "\n"), show.out.constData());
        const qint64 samples = o.value("wake_latency_us").toObject().value("samples").toInteger();  // bounded by --seconds too
        QVERIFY(samples > 0);
        QVERIFY2(show.out.endsWith(" token=" + QByteArray::number(2 * samples) + "\n"), show.out.constData());
    }

    void fence_with_shared_is_a_usage_error() {
        const auto r = run({"hold", unique_name("fence.shared"), "--fence", "--shared", "--dsn", dsn_});
        QCOMPARE(r.code, 2);
        QVERIFY2(clean_one_line_error(r.err), r.err.constData());
        QVERIFY2(r.err.contains("--fence needs an exclusive lock"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliFence)
#include "test_cli_fence.moc"
