// What a user reads of a string Qt may render as rich text: tooltips hand rich text that shows
// its plain text exactly (ui/models/plain_text.hpp), so that server text is never taken for HTML.
#pragma once

#include <QModelIndex>
#include <QString>
#include <QTextDocument>

namespace shown_text {

inline QString shown(const QString& text) {
    if (!Qt::mightBeRichText(text)) return text;
    QTextDocument doc;
    doc.setHtml(text);
    return doc.toPlainText();
}

inline QString shownToolTip(const QModelIndex& index) { return shown(index.data(Qt::ToolTipRole).toString()); }

}  // namespace shown_text
