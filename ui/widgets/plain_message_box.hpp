// A message box whose text is shown as typed: QMessageBox's static helpers (warning(),
// information()) render their text as HTML when its first line looks like it, and these texts
// quote server errors, lock names and paths (see models/plain_text.hpp).
#pragma once

#include <QMessageBox>
#include <QString>
#include <QWidget>

namespace lockscope {

inline void showPlainMessage(QWidget* parent, QMessageBox::Icon icon, const QString& title, const QString& text) {
    QMessageBox box(icon, title, text, QMessageBox::Ok, parent);
    box.setTextFormat(Qt::PlainText);
    box.exec();
}

}  // namespace lockscope
