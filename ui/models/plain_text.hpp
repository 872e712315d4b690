// Text from the server or from users (application_name, query text, usename, client host, lock
// names, error messages, scraped metric names) shown where Qt may render rich text. A tooltip,
// a QLabel in Qt::AutoText and a QMessageBox take a string for HTML when Qt::mightBeRichText()
// finds a tag in its first line, and any database user can set such text ("<h1>", "<table
// width=5000>", "<a href>") to hide or fake what an operator sees. Tooltips therefore go through
// plainToolTip(); labels and message boxes that show such text are set to Qt::PlainText.
#pragma once

#include <QString>
#include <QVariant>

namespace lockscope {

// `text` escaped and wrapped as rich text that shows it exactly as given, line breaks kept.
// (Escaping alone is not enough: escaped text without a tag is shown as plain text, "&lt;" and
// all.) An empty text stays empty, so that no tooltip shows.
inline QString plainToolTip(const QString& text) {
    if (text.isEmpty()) return text;
    return QStringLiteral("<p style='white-space:pre-wrap'>") + text.toHtmlEscaped() + QStringLiteral("</p>");
}

// The same for a model's Qt::ToolTipRole value; anything but a string passes through.
inline QVariant plainToolTip(const QVariant& tip) {
    if (tip.typeId() != QMetaType::QString) return tip;
    return QVariant(plainToolTip(tip.toString()));
}

}  // namespace lockscope
