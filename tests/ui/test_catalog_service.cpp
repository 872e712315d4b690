// CatalogService: every catalog operation as a job on its worker thread (its own SQLite
// connection), results as signals on the GUI thread; import and export report progress and can be
// canceled without changing anything; a catalog another program is writing is reported as busy,
// and the same job posted again succeeds once it is free. CatalogListModel: the filter, run off the
// GUI thread, gives exactly the rows a plain scan gives, refined or not; the catalog panel keeps
// the selected name selected across a refilter while it is still shown.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include <optional>

#include "catalog/catalog_list_model.hpp"
#include "catalog/catalog_service.hpp"
#include "pglock/key.hpp"
#include "stores/catalog_store.hpp"
#include "stores/name_import.hpp"
#include "stall_probe.hpp"
#include "widgets/catalog_panel.hpp"

using lockscope::CatalogService;
using lockscope::CatalogStore;

namespace {

qint64 keyOf(const QByteArray& name) { return pglock::key_of(std::string_view(name.constData(), std::size_t(name.size()))); }

// Waits (up to 180 s: a 300,000-name import under TSan) for the service to finish job `id`.
std::optional<CatalogService::Result> waitFor(CatalogService& service, quint64 id) {
    std::optional<CatalogService::Result> out;
    const auto conn = QObject::connect(&service, &CatalogService::finished, [&](const CatalogService::Result& r) {
        if (r.id == id) out = r;
    });
    QElapsedTimer clock;
    clock.start();
    while (!out && clock.elapsed() < 180000) QTest::qWait(5);
    QObject::disconnect(conn);
    return out;
}

// Waits for the snapshot to list `n` names.
bool waitForSize(CatalogService& service, std::size_t n) {
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < 60000) {
        if (service.snapshot() && service.snapshot()->size() == n) return true;
        QTest::qWait(5);
    }
    return false;
}

QString writeList(const QString& path, int n, const char* prefix) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
    for (int i = 0; i < n; ++i) f.write(QByteArray(prefix) + QByteArray::number(i) + '\n');
    return path;
}

}  // namespace

class TestCatalogService : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
    }

    void jobs_change_the_catalog_and_publish_snapshots() {
        CatalogStore store(path(QStringLiteral("jobs.sqlite")));
        QVERIFY(store.isOpen());
        QCOMPARE(store.add("before"), CatalogStore::AddResult::added);
        CatalogService service(store);
        QVERIFY(waitForSize(service, 1));

        auto r = waitFor(service, service.add("orders.daily-rollup"));
        QVERIFY(r && r->ok && r->added == CatalogStore::AddResult::added);
        QVERIFY(waitForSize(service, 2));
        const auto snapshot = service.snapshot();
        QCOMPARE(snapshot->name(1), QByteArray("orders.daily-rollup"));
        QCOMPARE(snapshot->key(1), keyOf("orders.daily-rollup"));
        QCOMPARE(snapshot->namesForKey(keyOf("orders.daily-rollup")), QList<QByteArray>{"orders.daily-rollup"});

        r = waitFor(service, service.add("orders.daily-rollup"));
        QVERIFY(r && !r->ok && r->added == CatalogStore::AddResult::duplicate);
        r = waitFor(service, service.add(""));
        QVERIFY(r && !r->ok && r->added == CatalogStore::AddResult::invalid);

        r = waitFor(service, service.rename("orders.daily-rollup", "orders.hourly"));
        QVERIFY(r && r->ok && r->renamed == CatalogStore::RenameResult::renamed);
        QTRY_VERIFY_WITH_TIMEOUT(service.snapshot()->rowOf("orders.hourly") >= 0, 10000);
        QCOMPARE(service.snapshot()->key(std::size_t(service.snapshot()->rowOf("orders.hourly"))), keyOf("orders.hourly"));

        r = waitFor(service, service.remove("before"));
        QVERIFY(r && r->ok);
        r = waitFor(service, service.remove("never-there"));
        QVERIFY(r && !r->ok && r->error.contains(QStringLiteral("not in the catalog")));
        QVERIFY(waitForSize(service, 1));
        QCOMPARE(service.jobsInFlight(), 0);

        // A write through the store it was made from (another part of the app) is picked up too.
        QCOMPARE(store.add("written.elsewhere"), CatalogStore::AddResult::added);
        QVERIFY(waitForSize(service, 2));
    }

    void import_and_export_report_progress_and_can_be_canceled() {
        CatalogStore store(path(QStringLiteral("import.sqlite")));
        CatalogService service(store);
        QVERIFY(waitForSize(service, 0));
        const QString list = writeList(path(QStringLiteral("big.txt")), 300000, "imported.name-");

        // Canceled at the first progress report: nothing changes.
        QSignalSpy progress(&service, &CatalogService::progress);
        const quint64 id = service.importList(list);
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(), 180000);  // minutes under TSan on a busy machine
        service.cancel(id);
        auto r = waitFor(service, id);
        QVERIFY(r);
        QVERIFY2(r->canceled && !r->ok, qPrintable(r->error));
        QCOMPARE(store.count(), 0);

        // Run to the end: progress reaches the total, every name is listed.
        progress.clear();
        r = waitFor(service, service.importList(list));
        QVERIFY2(r && r->ok, r ? qPrintable(r->error) : "no result");
        QCOMPARE(r->report.added, 300000);
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.last().at(2).toLongLong(), 300000);
        QCOMPARE(progress.last().at(3).toLongLong(), 300000);
        QVERIFY(waitForSize(service, 300000));

        // Export: progress, the count, a file that imports back to the same names.
        const QString out = path(QStringLiteral("export.txt"));
        r = waitFor(service, service.exportList(out));
        QVERIFY2(r && r->ok, r ? qPrintable(r->error) : "no result");
        QCOMPARE(r->exported, 300000);
        QFile exported(out);
        QVERIFY(exported.open(QIODevice::ReadOnly));
        QCOMPARE(lockscope::names::parseNameList(exported.readAll()).names.size(), 300000);

        // A canceled export leaves no file behind.
        const QString canceledOut = path(QStringLiteral("canceled-export.txt"));
        progress.clear();
        const quint64 exportId = service.exportList(canceledOut);
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(), 180000);  // minutes under TSan on a busy machine
        service.cancel(exportId);
        r = waitFor(service, exportId);
        QVERIFY(r && r->canceled);
        QVERIFY(!QFile::exists(canceledOut));
    }

    void errors_are_reported() {
        CatalogStore store(path(QStringLiteral("errors.sqlite")));
        CatalogService service(store);
        auto r = waitFor(service, service.importList(path(QStringLiteral("missing.txt"))));
        QVERIFY(r && !r->ok && !r->canceled);
        QVERIFY2(r->error.contains(QStringLiteral("missing.txt")), qPrintable(r->error));
        r = waitFor(service, service.exportList(path(QStringLiteral("no-such-dir/out.txt"))));
        QVERIFY(r && !r->ok);
        QVERIFY2(r->error.contains(QStringLiteral("export")), qPrintable(r->error));
    }

    // Another program holds the write lock: the add waits out the busy timeout, then says "busy";
    // posted again once the lock is gone, it succeeds.
    void busy_catalog_is_reported_and_retry_works() {
        const QString file = path(QStringLiteral("busy.sqlite"));
        CatalogStore store(file);
        CatalogService service(store);
        QVERIFY(waitForSize(service, 0));
        const QString conn = QUuid::createUuid().toString();
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), conn);
            db.setDatabaseName(file);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("BEGIN EXCLUSIVE")));
            StallProbe probe;
            auto r = waitFor(service, service.add("while.busy"));
            QVERIFY(r && !r->ok);
            QVERIFY2(r->error.contains(QStringLiteral("busy: another program is writing to it")), qPrintable(r->error));
            QVERIFY2(probe.maxGapMs() < 1000, qPrintable(QString::number(probe.maxGapMs())));  // the window stayed live
            QVERIFY(q.exec(QStringLiteral("ROLLBACK")));
        }
        QSqlDatabase::removeDatabase(conn);
        auto r = waitFor(service, service.add("while.busy"));
        QVERIFY2(r && r->ok, r ? qPrintable(r->error) : "no result");
    }

    void destroying_the_service_mid_import_cancels_it() {
        CatalogStore store(path(QStringLiteral("shutdown.sqlite")));
        const QString list = writeList(path(QStringLiteral("shutdown.txt")), 300000, "late.name-");
        QElapsedTimer clock;
        {
            CatalogService service(store);
            QSignalSpy progress(&service, &CatalogService::progress);
            service.importList(list);
            QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(), 180000);  // minutes under TSan on a busy machine
            clock.start();
        }
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(store.count(), 0);
        // An add posted just before the service goes away is not lost.
        {
            CatalogService service(store);
            service.add("added.at.shutdown");
        }
        QCOMPARE(store.count(), 1);
    }

    void filter_matches_a_plain_scan() {
        std::vector<lockscope::CatalogEntry> entries;
        const QList<QByteArray> names = {"Orders.Daily", "orders.hourly", "billing.nightly", "caf\xc3\xa9.job", "tab\there",
                                         "ORDERS-x", "nothing"};
        for (const QByteArray& n : names) entries.push_back({n, keyOf(n), {}, {}, {}});
        const auto snapshot = lockscope::CatalogSnapshot::fromEntries(entries);
        lockscope::CatalogListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSnapshot(snapshot);
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), names.size(), 10000);
        // Typed a char at a time (each a refinement), then a needle that is not one.
        for (const QString& needle : {QStringLiteral("o"), QStringLiteral("or"), QStringLiteral("ORD"), QStringLiteral("orders."),
                                      QStringLiteral("CAFÉ"), QStringLiteral("\\t"), QStringLiteral("ly"), QString()}) {
            QSignalSpy applied(&model, &lockscope::CatalogListModel::filterApplied);
            model.setFilter(needle);
            QTRY_VERIFY_WITH_TIMEOUT(!applied.isEmpty() && !model.filtering(), 10000);
            QList<QByteArray> expected, shown;
            for (std::size_t row = 0; row < snapshot->size(); ++row)
                if (lockscope::names::printable(snapshot->name(row)).contains(needle, Qt::CaseInsensitive)) expected << snapshot->name(row);
            for (int row = 0; row < model.rowCount(); ++row) shown << model.nameAt(row);
            QCOMPARE(shown, expected);
        }
    }

    void panel_keeps_the_selection_across_a_refilter() {
        CatalogStore store(path(QStringLiteral("selection.sqlite")));
        for (const char* n : {"alpha.one", "alpha.two", "beta.one"}) QCOMPARE(store.add(n), CatalogStore::AddResult::added);
        CatalogService service(store);
        lockscope::CatalogPanel panel(service);
        panel.show();
        auto* table = panel.findChild<QTableView*>(QStringLiteral("catalogTable"));
        auto* filter = panel.findChild<QLineEdit*>(QStringLiteral("catalogFilter"));
        QVERIFY(table && filter);
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 3, 10000);
        table->selectRow(1);
        QCOMPARE(panel.selectedName(), QByteArray("alpha.two"));
        QSignalSpy applied(&panel.model(), &lockscope::CatalogListModel::filterApplied);
        filter->setText(QStringLiteral("two"));  // still shown, at another row
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 1, 10000);
        QCOMPARE(panel.selectedName(), QByteArray("alpha.two"));
        filter->setText(QString());
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 3, 10000);
        QCOMPARE(panel.selectedName(), QByteArray("alpha.two"));
        filter->setText(QStringLiteral("beta"));  // no longer shown: nothing selected
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 1, 10000);
        QCOMPARE(panel.selectedName(), QByteArray());
        // A change in the catalog (a new snapshot) keeps it as well.
        filter->setText(QString());
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 3, 10000);
        table->selectRow(2);
        QVERIFY(waitFor(service, service.add("aaa.first")));
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 4, 10000);
        QCOMPARE(panel.selectedName(), QByteArray("beta.one"));
    }
};

QTEST_MAIN(TestCatalogService)
#include "test_catalog_service.moc"
