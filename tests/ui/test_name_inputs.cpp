// What an operator types or pastes where a lock name or key goes (no server: the widgets' own
// logic, offscreen). A name is hashed whole, however long, and shown elided so that it cannot
// make the window wider than a screen; and the resolver reads back every notation the views
// display for a lock, the int4-pair form included.
#include <QAbstractButton>
#include <QApplication>
#include <QDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "locks_test_world.hpp"
#include "shown_text.hpp"
#include "models/locks_model.hpp"
#include "pglock/key.hpp"
#include "catalog/catalog_service.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/catalog_panel.hpp"
#include "widgets/resolver_panel.hpp"
#include "widgets/take_lock_dialog.hpp"

namespace {

// Wider than this, a window no longer fits any screen: the name must be elided.
constexpr int kMaxSaneWidth = 2000;
constexpr int kLongName = 40000;  // longer than QLineEdit's default maxLength (32767)

QByteArray longName() {
    QByteArray name(kLongName - 5, 'n');
    return "a" + name + "tail";  // the end differs from any cut: a cut name has another key
}

qint64 keyOf(const QByteArray& name) {
    return pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
}

// Runs `act` on the first visible dialog as soon as one shows up (exec() blocks the test).
template <typename F>
void whenDialogShown(F act, int attemptsLeft = 200) {
    QTimer::singleShot(25, [act, attemptsLeft] {
        for (QWidget* w : QApplication::topLevelWidgets()) {
            if (auto* dialog = qobject_cast<QDialog*>(w); dialog && dialog->isVisible()) {
                act(dialog);
                return;
            }
        }
        if (attemptsLeft > 0) whenDialogShown(act, attemptsLeft - 1);
    });
}

}  // namespace

class TestNameInputs : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
    }

    void resolver_hashes_a_long_name_whole_and_stays_narrow() {
        const QByteArray name = longName();
        lockscope::ResolverPanel panel;
        panel.show();
        panel.setText(QString::fromLatin1(name));
        QCOMPARE(panel.text().size(), kLongName);
        QVERIFY(panel.currentName().has_value());
        QCOMPARE(panel.currentName()->size(), kLongName);
        QCOMPARE(panel.currentKey(), std::optional<qint64>(keyOf(name)));
        QVERIFY2(panel.minimumSizeHint().width() < kMaxSaneWidth, qPrintable(QString::number(panel.minimumSizeHint().width())));
        QVERIFY2(panel.sizeHint().width() < kMaxSaneWidth, qPrintable(QString::number(panel.sizeHint().width())));
    }

    // Text meant as a number that is not one (a 0x prefix, digits with a stray character, half a
    // pair) is an inline error that says how to take it as a name instead; the "as name" button
    // then hashes exactly that text. Plain text is hashed as a name without asking.
    void resolver_refuses_attempted_numbers_and_offers_as_name() {
        lockscope::ResolverPanel panel;
        panel.show();
        auto* error = panel.findChild<QLabel*>(QStringLiteral("resolverError"));
        QVERIFY(error);
        for (const QByteArray& typed : {QByteArray("0xzz"), QByteArray("0xzz!"), QByteArray("12a"), QByteArray("123/")}) {
            panel.setText(QString::fromLatin1(typed));
            QVERIFY2(!panel.currentKey(), typed.constData());
            QVERIFY2(!error->isHidden(), typed.constData());
            QVERIFY2(error->text().startsWith(QStringLiteral("not a key: ")), qPrintable(error->text()));
            QVERIFY2(error->text().endsWith(QStringLiteral(" — click “as name” to hash it as a name")), qPrintable(error->text()));
            auto* asName = panel.findChild<QAbstractButton*>(QStringLiteral("resolverAsName"));
            QVERIFY(asName);
            asName->click();
            QCOMPARE(panel.currentKey(), std::optional<qint64>(keyOf(typed)));
            QCOMPARE(panel.currentName(), std::optional<QByteArray>(typed));
            QVERIFY(error->isHidden());
            asName->click();  // back to reading keys
            QVERIFY(!panel.currentKey());
        }
        for (const QByteArray& typed : {QByteArray("orders.daily-rollup"), QByteArray("2024-01-01"), QByteArray("zz")}) {
            panel.setText(QString::fromLatin1(typed));
            QCOMPARE(panel.currentKey(), std::optional<qint64>(keyOf(typed)));
            QVERIFY2(error->isHidden(), qPrintable(error->text()));
        }
    }

    void take_lock_dialog_hashes_a_long_name_whole_and_stays_narrow() {
        const QByteArray name = longName();
        lockscope::TakeLockDialog dialog(name);
        dialog.show();
        QCOMPARE(dialog.name().size(), kLongName);
        QCOMPARE(dialog.name(), name);
        const auto key = dialog.findChildren<QLabel*>();
        bool keyShown = false;
        for (QLabel* label : key) keyShown = keyShown || label->text().startsWith(QString::number(keyOf(name)));
        QVERIFY2(keyShown, "the dialog does not show the key of the whole name");
        // Typed (pasted) rather than given: the same.
        auto* edit = dialog.findChild<QLineEdit*>(QStringLiteral("takeLockName"));
        QVERIFY(edit);
        edit->clear();
        edit->insert(QString::fromLatin1(name));
        QCOMPARE(dialog.name(), name);
        QVERIFY2(dialog.sizeHint().width() < kMaxSaneWidth, qPrintable(QString::number(dialog.sizeHint().width())));
    }

    void catalog_add_keeps_a_long_name_whole() {
        lockscope::CatalogStore store(dir_.filePath(QStringLiteral("long.sqlite")));
        QVERIFY(store.isOpen());
        lockscope::CatalogService service(store);
        lockscope::CatalogPanel panel(service);
        panel.show();
        QPushButton* add = nullptr;
        for (auto* b : panel.findChildren<QPushButton*>())
            if (b->text() == QStringLiteral("Add…")) add = b;
        QVERIFY(add);
        const QByteArray name = longName();
        bool typed = false;
        whenDialogShown([&](QDialog* dialog) {
            if (auto* edit = dialog->findChild<QLineEdit*>()) {
                edit->insert(QString::fromLatin1(name));
                typed = true;
            }
            dialog->accept();
        });
        add->click();
        QVERIFY(typed);
        QTRY_COMPARE_WITH_TIMEOUT(store.count(), 1, 10000);  // added on the service's worker
        QCOMPARE(store.entries().front().name.size(), kLongName);
        QCOMPARE(store.entries().front().key, keyOf(name));
        QVERIFY2(panel.minimumSizeHint().width() < kMaxSaneWidth, qPrintable(QString::number(panel.minimumSizeHint().width())));

        // Adding it again: the message names it, elided, and the panel stays narrow.
        whenDialogShown([&](QDialog* dialog) {
            if (auto* edit = dialog->findChild<QLineEdit*>()) edit->insert(QString::fromLatin1(name));
            dialog->accept();
        });
        add->click();
        auto* status = panel.findChild<QLabel*>(QStringLiteral("catalogStatus"));
        QVERIFY(status);
        QTRY_VERIFY_WITH_TIMEOUT(status->text().contains(QStringLiteral("already in the catalog")), 10000);
        QCOMPARE(store.count(), 1);
        QVERIFY2(panel.minimumSizeHint().width() < kMaxSaneWidth, qPrintable(QString::number(panel.minimumSizeHint().width())));
    }

    // Every way the locks view shows a lock, read back by the resolver, finds that lock held.
    void resolver_reads_every_notation_the_views_display() {
        locks_test::World world;
        const qint64 key = pglock::key_of("orders.daily-rollup");
        world.add(key, {101});
        world.addPair(1, 2, 202);
        world.addPair(-7, 2147483647, 303);
        auto snapshot = world.make();
        lockscope::LocksModel model;
        model.applySnapshot(snapshot);
        QCOMPARE(model.rowCount(), 3);

        auto result = std::make_shared<lockscope::PollResult>();
        result->snapshot = snapshot;
        lockscope::ResolverPanel panel;
        panel.setLatest(result);
        auto* live = panel.findChild<QLabel*>(QStringLiteral("resolverLive"));
        auto* error = panel.findChild<QLabel*>(QStringLiteral("resolverError"));
        QVERIFY(live && error);

        for (int row = 0; row < model.rowCount(); ++row) {
            const QModelIndex name = model.index(row, lockscope::LocksModel::Name);
            const QModelIndex keyCell = model.index(row, lockscope::LocksModel::Key);
            const int holder = model.index(row, lockscope::LocksModel::Holders).data().toInt();
            // The tooltip as the user reads it (and would copy it), not its rich-text wrapping.
            QStringList shown = {keyCell.data().toString(), shown_text::shownToolTip(keyCell)};
            if (name.data().toString().contains(QStringLiteral("int4 pair"))) shown << name.data().toString();
            for (const QString& text : shown) {
                panel.setText(text);
                QVERIFY2(!error->isVisible() || error->text().isEmpty(), qPrintable(text + QStringLiteral(": ") + error->text()));
                QVERIFY2(live->text().startsWith(QStringLiteral("held by pid %1").arg(holder)),
                         qPrintable(QStringLiteral("\"%1\" gave \"%2\" (holder %3)").arg(text, live->text()).arg(holder)));
            }
        }
        // A bigint key whose bits equal an int4 pair's is another lock: not held.
        panel.setText(QString::number(pglock::key_of(pglock::LockTag{1, 2})));
        QCOMPARE(live->text(), QStringLiteral("not held (as of the last poll)"));
    }
};

QTEST_MAIN(TestNameInputs)
#include "test_name_inputs.moc"
