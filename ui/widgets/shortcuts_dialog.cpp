#include "widgets/shortcuts_dialog.hpp"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QKeySequence>
#include <QTableWidget>
#include <QVBoxLayout>

namespace lockscope {

QList<QPair<QString, QString>> shortcutRows(const QWidget& window) {
    QList<QPair<QString, QString>> rows;
    for (const QAction* action : window.findChildren<QAction*>()) {
        QStringList keys;
        for (const QKeySequence& key : action->shortcuts()) keys << key.toString(QKeySequence::NativeText);
        if (keys.isEmpty()) continue;
        QString text = action->text();
        text.remove(QLatin1Char('&'));
        text.remove(QChar(0x2026));  // "Take lock…": the dots say a dialog follows, not part of the name
        rows.append({text, keys.join(QStringLiteral(", "))});
    }
    return rows;
}

void showShortcutsDialog(QWidget* window) {
    QDialog dialog(window);
    dialog.setObjectName(QStringLiteral("shortcutsDialog"));
    dialog.setWindowTitle(QDialog::tr("Keyboard shortcuts"));
    auto* layout = new QVBoxLayout(&dialog);
    const auto rows = shortcutRows(*window);
    auto* table = new QTableWidget(static_cast<int>(rows.size()), 2, &dialog);
    table->setObjectName(QStringLiteral("shortcutsTable"));
    table->setAccessibleName(QDialog::tr("Keyboard shortcuts"));
    table->setHorizontalHeaderLabels({QDialog::tr("Action"), QDialog::tr("Keys")});
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    for (int r = 0; r < rows.size(); ++r) {
        table->setItem(r, 0, new QTableWidgetItem(rows[r].first));
        table->setItem(r, 1, new QTableWidgetItem(rows[r].second));
    }
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(table);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.resize(460, 380);
    dialog.exec();
}

}  // namespace lockscope
