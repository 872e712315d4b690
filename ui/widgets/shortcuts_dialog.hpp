// Help → Keyboard shortcuts: the list is read from the window's actions themselves, so it can
// never say something the keys do not do.
#pragma once

#include <QList>
#include <QPair>
#include <QString>

class QWidget;

namespace lockscope {

// (what it does, its keys in the platform's notation) for every action under `window` that has
// a shortcut, in the order the actions were made.
QList<QPair<QString, QString>> shortcutRows(const QWidget& window);

void showShortcutsDialog(QWidget* window);

}  // namespace lockscope
