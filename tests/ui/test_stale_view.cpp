// The locks view during an outage, against a cluster of the test's own that the test stops: the
// moment a poll fails, the rows it still shows are marked stale (greyed), their Held-for stops
// counting, and the window says since when the data is ("as of HH:MM:SS"). A screenshot of the
// stale window is left in the build dir (stale-view.png).
#include <QLabel>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <cstdlib>

#include "models/locks_model.hpp"
#include "own_cluster.hpp"
#include "pg_conn.hpp"
#include "pglock/key.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/main_window.hpp"

namespace {

QModelIndex rowWithKey(QTreeView& view, qint64 key) {
    QAbstractItemModel* m = view.model();
    for (int row = 0; row < m->rowCount(); ++row) {
        const QModelIndex i = m->index(row, lockscope::LocksModel::Key);
        if (i.data(lockscope::LocksModel::KeyRole).toLongLong() == key) return i;
    }
    return {};
}

QString labelsText(QWidget& window) {
    QStringList out;
    for (QLabel* label : window.findChildren<QLabel*>())
        if (label->isVisible()) out << label->text();
    return out.join(QStringLiteral(" | "));
}

}  // namespace

class TestStaleView : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QStandardPaths::setTestModeEnabled(true);
    }

    void an_outage_marks_the_rows_stale_and_freezes_their_timers() {
        pglock::test::OwnCluster cluster;
        const std::string dsn = cluster.admin_dsn();
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        QCOMPARE(catalog.add("orders.stale-view"), lockscope::CatalogStore::AddResult::added);
        const qint64 key = pglock::key_of("orders.stale-view");
        pglock::test::PgConn holder(dsn);
        QVERIFY(holder.ok());
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ")");

        lockscope::MainWindow window(catalog);
        window.resize(1100, 500);
        window.show();
        window.poller().setInterval(std::chrono::milliseconds(250));
        window.connectTo(QString::fromStdString(dsn));
        QTreeView& view = window.locksView();
        QTRY_VERIFY_WITH_TIMEOUT(rowWithKey(view, key).isValid(), 10000);
        const QModelIndex held = rowWithKey(view, key).siblingAtColumn(lockscope::LocksModel::HeldFor);
        QTRY_VERIFY_WITH_TIMEOUT(!held.data().toString().isEmpty(), 5000);
        QVERIFY2(!held.data(Qt::ForegroundRole).isValid(), "a live row is drawn as stale");
        QVERIFY(!labelsText(window).contains(QStringLiteral("as of ")));
        // While it is live: one lock is "1 lock", and the poller's session says who it is.
        QTRY_VERIFY2_WITH_TIMEOUT(labelsText(window).contains(QStringLiteral("1 lock,")), qPrintable(labelsText(window)), 5000);
        QCOMPARE(holder.one("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lockscope (monitor)'"), std::string("1"));

        pglock::test::run_program(QString::fromStdString(pglock::test::cluster_script()),
                                  {QStringLiteral("stop"), QString::fromStdString(cluster.dir())});
        auto* state = window.findChild<QLabel*>(QStringLiteral("stateLabel"));
        QVERIFY(state);
        QTRY_VERIFY_WITH_TIMEOUT(state->text().startsWith(QStringLiteral("disconnected")), 10000);

        // The rows are still there (the last thing known), marked as such.
        const QModelIndex row = rowWithKey(view, key);
        QVERIFY(row.isValid());
        const QString frozen = row.siblingAtColumn(lockscope::LocksModel::HeldFor).data().toString();
        QVERIFY2(labelsText(window).contains(QStringLiteral("as of ")), qPrintable(labelsText(window)));
        const QVariant grey = row.siblingAtColumn(lockscope::LocksModel::Name).data(Qt::ForegroundRole);
        QVERIFY2(grey.isValid(), "the rows of a failed poll are not greyed");
        QTest::qWait(2300);  // two ticks of the Held-for timer
        QCOMPARE(row.siblingAtColumn(lockscope::LocksModel::HeldFor).data().toString(), frozen);

        const QString shot = QStringLiteral(PGLOCK_TEST_BUILD_DIR "/stale-view.png");
        QVERIFY(window.grab().save(shot));
        qInfo("stale window: %s", qPrintable(shot));
    }
};

QTEST_MAIN(TestStaleView)
#include "test_stale_view.moc"
