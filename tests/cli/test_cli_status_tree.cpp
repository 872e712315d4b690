// `pglock status` and the lock tree: two waiters queue on an advisory lock whose holder itself
// waits for a row another session updated. The root is that session, which holds no advisory lock:
// --json's roots, the text's worst-root line and --tree all name it, with the locks on each edge.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_test_support.hpp"

using namespace clitest;

namespace {

QJsonObject root_with_pid(const QJsonArray& roots, int pid) {
    for (const auto& v : roots)
        if (v.toObject()["pid"].toInt() == pid) return v.toObject();
    return {};
}

}  // namespace

class TestCliStatusTree : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void tree_goes_past_the_advisory_holder_to_the_row_holder() {
        const QString name = unique_name("status.tree.invoice-run");
        const auto key = key_of(name);
        const QString catalog = dir_.filePath("tree.txt");
        {
            QFile f(catalog);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write((name + "\n").toUtf8());
        }
        const std::string table = "cli_tree_" + std::to_string(QRandomGenerator::global()->bounded(1, 1 << 30));
        RawConn admin(dsn());
        admin.query("CREATE TABLE " + table + " (id int PRIMARY KEY, v int)");
        admin.query("INSERT INTO " + table + " VALUES (1, 0)");
        {
            RawConn root(dsn());
            root.query("SET application_name = 'tree-root'");
            root.query("BEGIN");
            root.query("UPDATE " + table + " SET v = 1 WHERE id = 1");
            const std::string xid = root.scalar("SELECT pg_current_xact_id()::xid::text");
            AsyncConn holder(dsn()), w1(dsn()), w2(dsn());
            holder.send("SET application_name = 'tree-holder'; SELECT pg_advisory_lock(" + std::to_string(key) + ")");
            QVERIFY(holder.finish());
            holder.send("BEGIN; UPDATE " + table + " SET v = 2 WHERE id = 1");
            w1.send("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
            QVERIFY(eventually([&] { return root.waiting_count(key) == 1; }));
            w2.send("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
            QVERIFY(eventually([&] { return root.waiting_count(key) == 2; }));

            // --json: the root, its counts, and the locks on each edge.
            QJsonObject r;
            QVERIFY(eventually([&] {
                const auto run_ = run({"status", "--json", "--catalog", catalog, "--dsn", dsn()});
                if (run_.code != 0) return false;
                r = root_with_pid(QJsonDocument::fromJson(run_.out).object()["roots"].toArray(), root.pid());
                return !r.isEmpty() && r["blocked_total"].toInt() == 3;
            }));
            QCOMPARE(r["application_name"].toString(), QString("tree-root"));
            QCOMPARE(r["state"].toString(), QString("idle in transaction"));
            QCOMPARE(r["cycle"].toBool(), false);
            QCOMPARE(r["blocked_directly"].toInt(), 1);
            QCOMPARE(r["via"].toString(), QString::fromStdString("transaction " + xid));
            QVERIFY(r["oldest_wait_start"].isDouble());
            QVERIFY(r["oldest_waiting_s"].toDouble() >= 0);
            const QJsonArray top = r["blocks"].toArray();
            QCOMPARE(top.size(), 1);
            const QJsonObject h = top[0].toObject();
            QCOMPARE(h["pid"].toInt(), holder.pid());
            QCOMPARE(h["application_name"].toString(), QString("tree-holder"));
            QCOMPARE(h["locktype"].toString(), QString("transactionid"));
            QCOMPARE(h["mode"].toString(), QString("ShareLock"));
            QVERIFY(h["key"].isNull());
            const QJsonArray waiters = h["blocks"].toArray();
            QCOMPARE(waiters.size(), 2);
            QCOMPARE(waiters[0].toObject()["pid"].toInt(), w1.pid());  // oldest wait first
            QCOMPARE(waiters[1].toObject()["pid"].toInt(), w2.pid());  // under the holder, not under w1
            for (const auto& v : waiters) {
                const QJsonObject w = v.toObject();
                QCOMPARE(w["lock"].toString(), name);
                QCOMPARE(w["locktype"].toString(), QString("advisory"));
                QCOMPARE(w["key"].toInteger(), qint64(key));
                QCOMPARE(w["mode"].toString(), QString("exclusive"));
                QCOMPARE(w["queued"].toBool(), false);
                QVERIFY(w["blocks"].toArray().isEmpty());
            }

            // The text names the worst root (other tests' trees on the server are smaller).
            const QRegularExpression worst(
                QString("\\nworst root: PID %1 \\(tree-root\\) blocks 3 sessions via transaction %2, [0-9.]+m?s\\n")
                    .arg(root.pid()).arg(QString::fromStdString(xid)));
            QByteArray text;
            QVERIFY2(eventually([&] {
                text = run({"status", "--catalog", catalog, "--dsn", dsn()}).out;
                return worst.match(QString::fromUtf8(text)).hasMatch();
            }), text.constData());

            // --tree: the tree itself, indented by depth.
            const auto tree = run({"status", "--tree", "--catalog", catalog, "--dsn", dsn()});
            QCOMPARE(tree.code, 0);
            const QString out = QString::fromUtf8(tree.out);
            const QRegularExpression tree_re(
                QString("\\nroot pid=%1 app=tree-root state=\"idle in transaction\" blocks=3 directly=1 oldest=\\S+ "
                        "via=\"transaction %2\"\\n"
                        "  pid=%3 app=tree-holder waiting=\\S+ for=\"transaction %2\" mode=ShareLock\\n"
                        "    pid=%4 app=\\S* waiting=\\S+ for=%5 mode=exclusive\\n"
                        "    pid=%6 app=\\S* waiting=\\S+ for=%5 mode=exclusive\\n")
                    .arg(root.pid()).arg(QString::fromStdString(xid)).arg(holder.pid()).arg(w1.pid())
                    .arg(QRegularExpression::escape(name)).arg(w2.pid()));
            QVERIFY2(tree_re.match(out).hasMatch(), tree.out.constData());

            // Unwind from the root.
            root.query("ROLLBACK");
            QVERIFY(holder.finish());
            holder.send("ROLLBACK; SELECT pg_advisory_unlock(" + std::to_string(key) + ")");
            QVERIFY(holder.finish());
            QVERIFY(w1.finish());
        }
        admin.query("DROP TABLE " + table);
    }

    void tree_and_json_together_are_a_usage_error() {
        const auto r = run({"status", "--tree", "--json", "--dsn", "host=/nonexistent"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--tree") || r.err.contains("--json"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliStatusTree)
#include "test_cli_status_tree.moc"
