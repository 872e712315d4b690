// How the views write text (no server, offscreen): a bidi override in a name or an
// application_name is shown escaped, never obeyed, and names are isolated from the text around
// them; the catalog list starts sorted A→Z; counts read "1 lock", "1 name".
#include <QHeaderView>
#include <QLabel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "history/history_model.hpp"
#include "locks_test_world.hpp"
#include "models/locks_model.hpp"
#include "pglock/key.hpp"
#include "catalog/catalog_service.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/catalog_panel.hpp"

namespace {

const QChar kRlo(0x202E);  // RIGHT-TO-LEFT OVERRIDE: "abc\u202Egpj.exe" displays as "abcexe.jpg"
const QByteArray kEvil = QStringLiteral(u"invoice\u202Efdp.exe").toUtf8();

}  // namespace

class TestViewText : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
    }

    void locks_view_escapes_a_bidi_override() {
        locks_test::World world;
        const qint64 key = pglock::key_of(std::string_view(kEvil.constData(), static_cast<std::size_t>(kEvil.size())));
        world.add(key, {101});
        world.backend(101).application_name = QStringLiteral(u"svc\u202Egnp").toStdString();
        lockscope::LocksModel model;
        model.setNamer(lockscope::catalogNamer([&](qint64 k) -> std::optional<QByteArray> {
            if (k == key) return kEvil;
            return std::nullopt;
        }));
        model.applySnapshot(world.make());
        QCOMPARE(model.rowCount(), 1);
        for (int column : {int(lockscope::LocksModel::Name), int(lockscope::LocksModel::Application)}) {
            const QString shown = model.index(0, column).data().toString();
            QVERIFY2(!shown.contains(kRlo), qPrintable(QStringLiteral("column %1 obeys U+202E: %2").arg(column).arg(shown)));
            QVERIFY2(shown.contains(QStringLiteral("\\u202e")), qPrintable(shown));
            const QString tip = model.index(0, column).data(Qt::ToolTipRole).toString();
            QVERIFY2(!tip.contains(kRlo), qPrintable(tip));
        }
    }

    void history_and_catalog_escape_a_bidi_override() {
        lockscope::history::Record r;
        r.name = kEvil;
        const QString shown = lockscope::history::HistoryModel::displayName(r);
        QVERIFY2(!shown.contains(kRlo) && shown.contains(QStringLiteral("\\u202e")), qPrintable(shown));

        lockscope::CatalogStore store(dir_.filePath(QStringLiteral("bidi.sqlite")));
        QCOMPARE(store.add(kEvil), lockscope::CatalogStore::AddResult::added);
        lockscope::CatalogService service(store);
        lockscope::CatalogPanel panel(service);
        auto* table = panel.findChild<QTableView*>(QStringLiteral("catalogTable"));
        QVERIFY(table);
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 1, 10000);
        const QString cell = table->model()->index(0, 0).data().toString();
        QVERIFY2(!cell.contains(kRlo), qPrintable(cell));
    }

    void catalog_list_starts_sorted_a_to_z() {
        lockscope::CatalogStore store(dir_.filePath(QStringLiteral("sort.sqlite")));
        for (const char* name : {"bravo", "alpha", "charlie"}) QCOMPARE(store.add(name), lockscope::CatalogStore::AddResult::added);
        lockscope::CatalogService service(store);
        lockscope::CatalogPanel panel(service);
        panel.show();
        auto* table = panel.findChild<QTableView*>(QStringLiteral("catalogTable"));
        QVERIFY(table);
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 3, 10000);
        QStringList shown;
        for (int r = 0; r < table->model()->rowCount(); ++r) shown << table->model()->index(r, 0).data().toString();
        QCOMPARE(shown, (QStringList{QStringLiteral("alpha"), QStringLiteral("bravo"), QStringLiteral("charlie")}));
        QCOMPARE(table->horizontalHeader()->sortIndicatorOrder(), Qt::AscendingOrder);
    }

    void counts_of_one_are_singular() {
        lockscope::CatalogStore store(dir_.filePath(QStringLiteral("one.sqlite")));
        QCOMPARE(store.add("only"), lockscope::CatalogStore::AddResult::added);
        lockscope::CatalogService service(store);
        lockscope::CatalogPanel panel(service);
        auto* table = panel.findChild<QTableView*>(QStringLiteral("catalogTable"));
        QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 1, 10000);
        QStringList texts;
        for (QLabel* label : panel.findChildren<QLabel*>()) texts << label->text();
        QVERIFY2(texts.contains(QStringLiteral("1 name")), qPrintable(texts.join(QStringLiteral(" | "))));
    }
};

QTEST_MAIN(TestViewText)
#include "test_view_text.moc"
