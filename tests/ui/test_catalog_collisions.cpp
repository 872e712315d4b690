// Two catalogued names with one key: the store reports the collision and the catalog panel warns
// about it. SHA-256 will not produce a real 64-bit prefix collision for a test, so the store's key
// function is overridden to give billing.nightly the key of orders.daily-rollup. A row written into
// the file directly with another name's key (as a foreign writer could) is no collision: stored
// keys are never read back.
#include <QLabel>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include "pglock/key.hpp"
#include "catalog/catalog_service.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/catalog_panel.hpp"

using lockscope::CatalogStore;

namespace {

// Inserts (name, key) as a foreign writer would, bypassing CatalogStore's key derivation.
bool injectRow(const QString& file, const QByteArray& name, qint64 key) {
    const QString conn = QUuid::createUuid().toString();
    bool ok = false;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), conn);
        db.setDatabaseName(file);
        if (db.open()) {
            QSqlQuery q(db);
            q.prepare(QStringLiteral("INSERT INTO names (name, key, added_at) VALUES (?, ?, '2026-01-01T00:00:00.000Z')"));
            q.addBindValue(name);
            q.addBindValue(key);
            ok = q.exec();
        }
    }
    QSqlDatabase::removeDatabase(conn);
    return ok;
}

// A store whose key function makes billing.nightly share orders.daily-rollup's key.
class CollidingStore : public CatalogStore {
public:
    using CatalogStore::CatalogStore;
    // The catalog service reads the file through a sibling: it must collide the same way.
    std::unique_ptr<CatalogStore> openSibling() const override { return std::make_unique<CollidingStore>(path()); }

protected:
    qint64 keyFor(const QByteArray& name) const override {
        return name == "billing.nightly" ? pglock::key_of("orders.daily-rollup") : CatalogStore::keyFor(name);
    }
};

}  // namespace

class TestCatalogCollisions : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
    }

    void store_reports_names_sharing_a_key() {
        const QString file = dir_.filePath(QStringLiteral("store.sqlite"));
        CollidingStore store(file);
        QVERIFY(store.isOpen());
        QCOMPARE(store.add("orders.daily-rollup"), CatalogStore::AddResult::added);
        QCOMPARE(store.add("session.warmup"), CatalogStore::AddResult::added);
        QVERIFY(store.collisions().empty());  // real names, real keys

        const qint64 key = pglock::key_of("orders.daily-rollup");
        // A forged stored key makes no collision: the key is derived from the name.
        QVERIFY(injectRow(file, "forged.row", key));
        QVERIFY(store.collisions().empty());
        QCOMPARE(store.namesForKey(key), QList<QByteArray>{"orders.daily-rollup"});
        QCOMPARE(store.add("billing.nightly"), CatalogStore::AddResult::added);
        const auto found = store.collisions();
        QCOMPARE(found.size(), std::size_t(1));
        QCOMPARE(found[0].key, key);
        QCOMPARE(found[0].names, (std::vector<std::string>{"billing.nightly", "orders.daily-rollup"}));
        QCOMPARE(store.namesForKey(key), (QList<QByteArray>{"billing.nightly", "orders.daily-rollup"}));
    }

    void panel_warns_while_the_catalog_holds_a_collision() {
        const QString file = dir_.filePath(QStringLiteral("panel.sqlite"));
        CollidingStore store(file);
        QCOMPARE(store.add("orders.daily-rollup"), CatalogStore::AddResult::added);
        const qint64 key = pglock::key_of("orders.daily-rollup");
        QCOMPARE(store.add("billing.nightly"), CatalogStore::AddResult::added);
        QCOMPARE(store.add("session.warmup"), CatalogStore::AddResult::added);

        lockscope::CatalogService service(store);
        lockscope::CatalogPanel panel(service);
        panel.show();
        auto* warning = panel.findChild<QLabel*>(QStringLiteral("catalogCollisionWarning"));
        QVERIFY(warning);
        QTRY_VERIFY_WITH_TIMEOUT(warning->isVisible(), 10000);
        QVERIFY2(warning->text().contains(QStringLiteral("billing.nightly, orders.daily-rollup")), qPrintable(warning->text()));
        QVERIFY2(warning->text().contains(QString::number(key)), qPrintable(warning->text()));
        QVERIFY(warning->text().contains(QStringLiteral("same lock")));

        // Both rows are marked, the innocent one is not.
        auto* table = panel.findChild<QTableView*>(QStringLiteral("catalogTable"));
        QVERIFY(table);
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 3, 10000);
        int marked = 0;
        for (int r = 0; r < table->model()->rowCount(); ++r)
            marked += !table->model()->index(r, 0).data(Qt::ToolTipRole).toString().isEmpty();
        QCOMPARE(marked, 2);

        // Resolving it (removing one of the two) takes the warning away.
        QVERIFY(store.remove("billing.nightly"));
        QTRY_VERIFY_WITH_TIMEOUT(!warning->isVisible(), 10000);
        QVERIFY(store.collisions().empty());
    }
};

QTEST_MAIN(TestCatalogCollisions)
#include "test_catalog_collisions.moc"
