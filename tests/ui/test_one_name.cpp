// One lock, one name (offscreen, real server): a lock in no catalog, named by its holder's
// application_name, shows under the same name in the locks view, the session panel, the
// timeline, the histogram and the history, also after the holder let go; the history records
// where the name came from, and its CSV carries the name and that source (as its last column).
#include <QBuffer>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QUuid>
#include <QtTest>

#include "actions/lock_controller.hpp"
#include "charts/charts_panel.hpp"
#include "charts/hold_stats_model.hpp"
#include "charts/timeline_model.hpp"
#include "history/history_model.hpp"
#include "history/history_recorder.hpp"
#include "history/history_store.hpp"
#include "models/locks_model.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "pglock/lock.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/main_window.hpp"

namespace {

using lockscope::LocksModel;

// The hold rows of `key` in the window's history file, read as the history tab does.
std::vector<lockscope::history::Record> historyHolds(const QString& path, qint64 key) {
    lockscope::history::HistoryStore store(path, lockscope::history::HistoryStore::Mode::readOnly);
    std::vector<lockscope::history::Record> out;
    if (!store.isOpen()) return out;
    for (const auto& r : store.query({.kind = lockscope::history::Kind::hold}).rows)
        if (r.key == key) out.push_back(r);
    return out;
}

QModelIndex lockRow(QTreeView& view, qint64 key) {
    QAbstractItemModel* m = view.model();
    for (int row = 0; row < m->rowCount(); ++row) {
        const QModelIndex i = m->index(row, LocksModel::Name);
        if (i.data(LocksModel::KeyRole).toLongLong() == key) return i;
    }
    return {};
}

}  // namespace

class TestOneName : public QObject {
    Q_OBJECT
    std::string dsn_;
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server: run under ctest (pg fixture) or set PGLOCK_TEST_DSN");
        dsn_ = *dsn;
        QVERIFY(dir_.isValid());
        QStandardPaths::setTestModeEnabled(true);
    }

    void a_lock_named_by_its_holder_has_one_name_in_every_view() {
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("empty-catalog.sqlite")));  // knows no name
        QVERIFY(catalog.isOpen());
        const std::string name = "adhoc.reindex-" + QUuid::createUuid().toString(QUuid::Id128).left(6).toStdString();
        const qint64 key = pglock::key_of(name);
        const pglock::monitor::LockId id{pglock::monitor::KeyForm::bigint, pglock::tag_of(key)};
        const QString expected = QChar(0x2068) + QString::fromStdString(name) + QChar(0x2069) + QStringLiteral(" (from holder)");

        lockscope::MainWindow window(catalog);
        window.show();
        window.poller().setInterval(std::chrono::milliseconds(250));
        window.connectTo(QString::fromStdString(dsn_), QString(), QStringLiteral("one-name-") + QUuid::createUuid().toString(QUuid::Id128));
        QTreeView& view = window.locksView();

        pglock::PoolOptions po;
        po.overrides = {{"application_name", "adhoc"}};
        pglock::Pool pool(dsn_, po);
        pglock::Lock lock(pool, name);
        int pid = 0;
        {
            pglock::Guard guard = lock.acquire();
            pid = guard.backend_pid();
            QTRY_VERIFY_WITH_TIMEOUT(lockRow(view, key).isValid(), 10000);
            const QModelIndex row = lockRow(view, key);
            QCOMPARE(row.data().toString(), expected);
            // The session panel names what the selected session holds the same way.
            view.setCurrentIndex(row);
            auto* table = window.findChild<QTableWidget*>(QStringLiteral("sessionTable"));
            QVERIFY(table);
            QString holds;
            for (int r = 0; r < table->rowCount(); ++r)
                if (table->item(r, 0) && table->item(r, 0)->text() == QStringLiteral("Holds")) holds = table->item(r, 1)->text();
            QVERIFY2(holds.contains(expected), qPrintable(holds));
            QVERIFY(!guard.release());
        }

        // After the holder let go: the history row, the timeline's lane and the histogram's row.
        const QString path = window.historyRecorder().path();
        QTRY_COMPARE_WITH_TIMEOUT(historyHolds(path, key).size(), std::size_t(1), 10000);
        const lockscope::history::Record record = historyHolds(path, key).front();
        QCOMPARE(record.pid, pid);
        QCOMPARE(lockscope::history::HistoryModel::displayName(record), expected);
        QCOMPARE(record.name, std::optional<QByteArray>(QByteArray::fromStdString(name)));
        QCOMPARE(record.nameSource, lockscope::LockNameSource::holder);

        lockscope::charts::TimelineModel* timeline = window.charts().timelineModel();
        QTRY_VERIFY_WITH_TIMEOUT(timeline->rowOfLane(id) >= 0, 10000);
        QCOMPARE(timeline->index(timeline->rowOfLane(id), lockscope::charts::TimelineModel::Label).data().toString(), expected);
        lockscope::charts::HoldStatsModel* stats = window.charts().holdStatsModel();
        QTRY_VERIFY_WITH_TIMEOUT(stats->rowOfLock(id) >= 0, 10000);
        QCOMPARE(stats->index(stats->rowOfLock(id), lockscope::charts::HoldStatsModel::Name).data().toString(), expected);

        // The CSV: the name itself, and where it came from as the last column.
        lockscope::history::HistoryStore store(path, lockscope::history::HistoryStore::Mode::readOnly);
        QBuffer csv;
        QVERIFY(csv.open(QIODevice::WriteOnly));
        QVERIFY(store.exportCsv({.kind = lockscope::history::Kind::hold}, csv) >= 1);
        const QList<QByteArray> lines = csv.data().split('\n');
        QVERIFY2(lines.first().trimmed().endsWith(",name_source"), lines.first().constData());
        QByteArray line;
        for (const QByteArray& l : lines)
            if (l.contains("," + QByteArray::number(key) + ",")) line = l.trimmed();
        QVERIFY2(!line.isEmpty(), csv.data().constData());
        QCOMPARE(line.split(',').at(1), QByteArray::fromStdString(name));
        QVERIFY2(line.endsWith(",holder"), line.constData());
    }

    // A lock taken by hand in this window under a name in no catalog: "(taken here)" in the locks
    // view while held, and the same name in the timeline and the history after the release.
    void a_lock_taken_here_keeps_its_name_after_the_release() {
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("empty-catalog-2.sqlite")));
        QVERIFY(catalog.isOpen());
        const QByteArray name = "adhoc.by-hand-" + QUuid::createUuid().toString(QUuid::Id128).left(6).toUtf8();
        const qint64 key = pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
        const pglock::monitor::LockId id{pglock::monitor::KeyForm::bigint, pglock::tag_of(key)};
        const QString expected = QChar(0x2068) + QString::fromUtf8(name) + QChar(0x2069) + QStringLiteral(" (taken here)");

        lockscope::MainWindow window(catalog);
        window.show();
        window.poller().setInterval(std::chrono::milliseconds(250));
        window.connectTo(QString::fromStdString(dsn_), QString(), QStringLiteral("one-name-") + QUuid::createUuid().toString(QUuid::Id128));
        auto& locks = window.lockController();
        QVERIFY(locks.take(name, lockscope::TakeMode::Try, false).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(locks.holdingCount(), 1, 10000);
        QTreeView& view = window.locksView();
        QTRY_VERIFY_WITH_TIMEOUT(lockRow(view, key).isValid(), 10000);
        QCOMPARE(lockRow(view, key).data().toString(), expected);
        QVERIFY(locks.release(locks.locks().front().id).accepted());
        QTRY_COMPARE_WITH_TIMEOUT(locks.holdingCount(), 0, 10000);

        const QString path = window.historyRecorder().path();
        QTRY_COMPARE_WITH_TIMEOUT(historyHolds(path, key).size(), std::size_t(1), 10000);
        const lockscope::history::Record record = historyHolds(path, key).front();
        QCOMPARE(lockscope::history::HistoryModel::displayName(record), expected);
        QCOMPARE(record.nameSource, lockscope::LockNameSource::takenHere);
        lockscope::charts::TimelineModel* timeline = window.charts().timelineModel();
        QTRY_VERIFY_WITH_TIMEOUT(timeline->rowOfLane(id) >= 0, 10000);
        QCOMPARE(timeline->index(timeline->rowOfLane(id), lockscope::charts::TimelineModel::Label).data().toString(), expected);
    }
};

QTEST_MAIN(TestOneName)
#include "test_one_name.moc"
