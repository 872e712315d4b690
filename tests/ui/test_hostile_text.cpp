// Text any database user controls, shown by the window offscreen against the real server: an
// application_name and query text full of HTML, and a catalogued lock name with tags. Wherever Qt
// could render rich text (every item view's tooltips, the side panels' labels) the text must
// show exactly as the server has it, tags and all, never as HTML that could hide or fake what
// an operator reads.
#include <QAbstractItemView>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <libpq-fe.h>

#include <string_view>

#include "charts/charts_panel.hpp"
#include "charts/timeline_model.hpp"
#include "models/locks_model.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "shown_text.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/main_window.hpp"
#include "widgets/resolver_panel.hpp"

namespace {

using Conn = pglock::test::PgConn;

// application_name holds up to 63 printable ASCII bytes.
const QByteArray kApp = "<h1>XAPP</h1><table width=5000><a href=x>f</a>";
const QByteArray kQuery = "<h1>XQUERY</h1><a href='http://x'>fake</a>";
const QByteArray kName = "<b>XNAME</b><img src=x>.lock";

using shown_text::shown;

// Every tooltip of every view in `root` (tree children too), with where it was found.
void collectToolTips(const QAbstractItemModel* m, const QModelIndex& parent, const QString& where, QList<QPair<QString, QString>>& out) {
    for (int row = 0; row < m->rowCount(parent); ++row) {
        for (int column = 0; column < m->columnCount(parent); ++column) {
            const QModelIndex i = m->index(row, column, parent);
            const QString tip = i.data(Qt::ToolTipRole).toString();
            if (!tip.isEmpty()) out.append({QStringLiteral("%1 [%2,%3]").arg(where).arg(row).arg(column), tip});
        }
        const QModelIndex first = m->index(row, 0, parent);
        if (m->hasChildren(first)) collectToolTips(m, first, where, out);
    }
}

qint64 keyOf(const QByteArray& name) {
    return pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
}

}  // namespace

class TestHostileText : public QObject {
    Q_OBJECT
    std::string dsn_;
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        auto dsn = pglock::test::test_dsn();
        QVERIFY2(dsn.has_value(), "no test server");
        dsn_ = *dsn;
        QVERIFY(dir_.isValid());
        QStandardPaths::setTestModeEnabled(true);
    }

    void serverTextIsNeverRenderedAsHtml() {
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("catalog.sqlite")));
        QVERIFY(catalog.isOpen());
        QCOMPARE(catalog.add(kName), lockscope::CatalogStore::AddResult::added);
        const qint64 key = keyOf(kName);

        Conn holder(dsn_ + " application_name='" + kApp.toStdString() + "'");
        QVERIFY(holder.ok());
        QCOMPARE(holder.one("SELECT current_setting('application_name')"), kApp.toStdString());
        holder.one("SELECT pg_advisory_lock(" + std::to_string(key) + ") /* " + kQuery.toStdString() + " */");
        // A waiter behind it, whose query the waiter row shows.
        Conn waiter(dsn_ + " application_name='" + kApp.toStdString() + "'");
        QVERIFY(waiter.ok());
        QVERIFY(PQsendQuery(waiter.c, ("SELECT pg_advisory_lock(" + std::to_string(key) + ") /* " + kQuery.toStdString() + " */").c_str()));

        lockscope::MainWindow window(catalog);
        window.show();
        window.poller().setInterval(std::chrono::milliseconds(250));
        window.connectTo(QString::fromStdString(dsn_));
        QTreeView& view = window.locksView();
        const auto lockRow = [&]() -> QModelIndex {
            for (int row = 0; row < view.model()->rowCount(); ++row) {
                const QModelIndex i = view.model()->index(row, 0);
                if (i.data(lockscope::LocksModel::KeyRole).toLongLong() == key && view.model()->rowCount(i) > 0) return i;
            }
            return {};
        };
        QTRY_VERIFY_WITH_TIMEOUT(lockRow().isValid(), 15000);
        view.setCurrentIndex(lockRow());  // the session panel shows the holder
        window.resolver().setText(QString::fromUtf8(kName));  // the resolver names the key
        QTRY_VERIFY_WITH_TIMEOUT(window.charts().timelineModel()->rowCount() > 0, 15000);
        QTest::qWait(300);

        QList<QPair<QString, QString>> tips;
        for (QAbstractItemView* v : window.findChildren<QAbstractItemView*>()) {
            if (v->model()) collectToolTips(v->model(), {}, v->objectName() + QLatin1Char(' ') + v->metaObject()->className(), tips);
        }
        for (QComboBox* box : window.findChildren<QComboBox*>()) collectToolTips(box->model(), {}, box->objectName(), tips);
        // Each hostile text that a tooltip carries must show with its tags.
        int checked = 0;
        QStringList wrong;
        for (const auto& [where, tip] : tips) {
            for (const QByteArray& hostile : {kApp, kQuery, kName}) {
                const QString marker = QString::fromUtf8(hostile).section(QLatin1Char('>'), 1, 1).section(QLatin1Char('<'), 0, 0);
                if (!shown(tip).contains(marker) && !tip.contains(marker)) continue;
                ++checked;
                if (!shown(tip).contains(QString::fromUtf8(hostile.left(hostile.indexOf("</") + 5))))
                    wrong << where + QStringLiteral(": ") + shown(tip).left(200);
            }
        }
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join(QStringLiteral("\n"))));
        // The locks view (name, holders, application, query of holder and waiter), the session
        // panel and the charts all showed at least one.
        QVERIFY2(checked >= 3, qPrintable(QString::number(checked)));

        // Labels that show such text are plain text.
        int labels = 0;
        for (QLabel* label : window.findChildren<QLabel*>()) {
            if (!label->text().contains(QStringLiteral("XNAME")) && !label->text().contains(QStringLiteral("XAPP"))) continue;
            ++labels;
            QVERIFY2(label->textFormat() == Qt::PlainText || !Qt::mightBeRichText(label->text()),
                     qPrintable(label->objectName() + QStringLiteral(": ") + label->text()));
        }
        QVERIFY(labels >= 1);  // the resolver's names line

        holder.one("SELECT pg_advisory_unlock_all()");
        PQrequestCancel(waiter.c);
    }
};

QTEST_MAIN(TestHostileText)
#include "test_hostile_text.moc"
