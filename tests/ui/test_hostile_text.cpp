// Text any database user controls, shown by the window offscreen against a real server.
// - HTML: an application_name and query text full of tags, and a catalogued lock name with tags.
//   Wherever Qt could render rich text (every item view's tooltips, the side panels' labels) the
//   text must show exactly as the server has it, tags and all, never as HTML that could hide or
//   fake what an operator reads.
// - Controls: a tenant on a cluster of the test's own names its role, database, schema and table
//   with ESC, BEL, C1 controls, a bidi override, a newline and bytes that are not UTF-8
//   (hostile_tenant.hpp), and a hostile server refuses the connection with such bytes. Every
//   cell, tooltip and label of the window, the Tree tab, the worst-root line and the state in the
//   status bar, the session panel and the terminate box show them by the one display rule.
#include <QAbstractButton>
#include <QAbstractItemView>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <libpq-fe.h>

#include <string_view>

#include "charts/charts_panel.hpp"
#include "charts/timeline_model.hpp"
#include "hostile_server.hpp"
#include "hostile_tenant.hpp"
#include "models/locks_model.hpp"
#include "pg_conn.hpp"
#include "pg_test_env.hpp"
#include "pglock/key.hpp"
#include "pglock/key_schemes.hpp"
#include "shown_text.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/main_window.hpp"
#include "widgets/resolver_panel.hpp"
#include "when_shown.hpp"

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

namespace hostile = pglock::test::hostile;

QString fromBytes(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// "" when `text` has nothing live (hostile_text.hpp); newlines only where `newlineOk`.
QString liveIn(const QString& text, bool newlineOk) {
    const QByteArray utf8 = text.toUtf8();
    return QString::fromStdString(hostile::first_live(std::string_view(utf8.constData(), std::size_t(utf8.size())), newlineOk));
}

// What a user reads in a model: every cell's text (one line each) and tooltip, with where.
struct Shown {
    QString where, text;
    bool tooltip = false;
};
void collectShown(const QAbstractItemModel* m, const QModelIndex& parent, const QString& where, QList<Shown>& out) {
    for (int row = 0; row < m->rowCount(parent); ++row) {
        for (int column = 0; column < m->columnCount(parent); ++column) {
            const QModelIndex i = m->index(row, column, parent);
            const QString at = QStringLiteral("%1 [%2,%3]").arg(where).arg(row).arg(column);
            if (const QVariant d = i.data(Qt::DisplayRole); d.typeId() == QMetaType::QString) out.append({at, d.toString(), false});
            if (const QString tip = shown(i.data(Qt::ToolTipRole).toString()); !tip.isEmpty()) out.append({at, tip, true});
        }
        const QModelIndex first = m->index(row, 0, parent);
        if (m->hasChildren(first)) collectShown(m, first, where, out);
    }
}

// The message as the rule shows a message: one_line folds its newline into "; " (and the two
// spaces libpq writes after "FATAL:" into one).
const QString kShownMessage = QStringLiteral(R"(ev\x1b[2J\x1b]0;owned\x07|\u009b31m\u0085|\u202eexe.|; |\x9b7m\xff)");

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

    void tenantNamesShowByTheRuleEverywhere() {
        std::unique_ptr<pglock::test::OwnCluster> cluster;
        hostile::Tenant tenant;
        try {
            cluster = std::make_unique<pglock::test::OwnCluster>();
            tenant = hostile::make_tenant(*cluster);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        pglock::SchemeContext context;
        context.database = tenant.database;
        const qint64 key = pglock::scheme_key("rails-migration", std::nullopt, context).packed;
        const hostile::Chain chain(tenant, key);

        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("tenant.sqlite")));
        lockscope::MainWindow window(catalog);
        window.show();
        window.poller().setInterval(std::chrono::milliseconds(250));
        window.connectTo(QString::fromStdString(tenant.operator_dsn()));
        auto* worst = window.findChild<QLabel*>(QStringLiteral("worstRootLabel"));
        QVERIFY(worst);
        QTRY_VERIFY_WITH_TIMEOUT(worst->text().contains(QStringLiteral("PID %1 ").arg(chain.root())), 15000);
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
        QTRY_VERIFY_WITH_TIMEOUT(window.charts().timelineModel()->rowCount() > 0, 15000);
        QTest::qWait(300);

        const QString one = fromBytes(hostile::shown_utf8) + fromBytes(hostile::shown_raw);
        const QString relation = QStringLiteral("relation \"s%1\".\"t%1\"").arg(one);
        const QString role = QStringLiteral("r") + one;
        QList<Shown> all;
        for (QAbstractItemView* v : window.findChildren<QAbstractItemView*>())
            if (v->model()) collectShown(v->model(), {}, v->objectName() + QLatin1Char(' ') + v->metaObject()->className(), all);
        collectShown(window.charts().timelineModel(), {}, QStringLiteral("timeline"), all);
        QStringList wrong;
        bool relationShown = false, roleShown = false;
        for (const Shown& s : all) {
            if (const QString live = liveIn(s.text, s.tooltip); !live.isEmpty()) wrong << s.where + QStringLiteral(": ") + live;
            relationShown = relationShown || (!s.tooltip && s.text.contains(relation));
            roleShown = roleShown || (!s.tooltip && s.text.contains(role));
        }
        for (QLabel* label : window.findChildren<QLabel*>()) {
            const bool oneLine = label->objectName() == QLatin1String("worstRootLabel") || label->objectName() == QLatin1String("stateLabel");
            if (const QString live = liveIn(label->text(), !oneLine); !live.isEmpty()) wrong << label->objectName() + QStringLiteral(": ") + live;
        }
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join(QLatin1Char('\n'))));
        QVERIFY2(relationShown, "no cell shows the tenant's table by the rule (the Tree tab's edge)");
        QVERIFY2(roleShown, "no cell shows the tenant's role by the rule (the session panel, the waiter's row)");
        QVERIFY2(worst->text().contains(QStringLiteral(" via ") + relation), qPrintable(worst->text()));

        // The terminate box the operator decides on: one line per field, the role's own included.
        QString asked;
        when_shown::whenShown<QMessageBox>([&asked](QMessageBox* box) {
            asked = box->text();
            box->button(QMessageBox::Cancel)->click();
        });
        view.setFocus();
        view.setCurrentIndex(lockRow());
        QTest::keyClick(&view, Qt::Key_Delete);
        QTRY_VERIFY_WITH_TIMEOUT(!asked.isEmpty(), 10000);
        QVERIFY2(liveIn(asked, true).isEmpty(), qPrintable(liveIn(asked, true)));
        QVERIFY2(asked.contains(QStringLiteral("\nUser: ") + role + QStringLiteral("\nState: ")), qPrintable(asked));
    }

    void aHostileServersRefusalShowsOnOneLine() {
        const hostile::RefusingServer server("m" + hostile::with_raw(""));
        lockscope::CatalogStore catalog(dir_.filePath(QStringLiteral("refused.sqlite")));
        lockscope::MainWindow window(catalog);
        window.show();
        window.connectTo(QString::fromStdString(server.dsn()));
        auto* state = window.findChild<QLabel*>(QStringLiteral("stateLabel"));
        QVERIFY(state);
        QTRY_VERIFY_WITH_TIMEOUT(state->text().contains(QStringLiteral("FATAL")), 15000);
        QVERIFY2(liveIn(state->text(), false).isEmpty(), qPrintable(liveIn(state->text(), false)));
        QVERIFY2(state->text().contains(QStringLiteral("FATAL: m") + kShownMessage), qPrintable(state->text()));
    }
};

QTEST_MAIN(TestHostileText)
#include "test_hostile_text.moc"
