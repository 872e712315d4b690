// Where an operator types or pastes a lock name. A name is any length and is hashed whole:
// QLineEdit's default maxLength (32767) would silently cut a longer paste, and the key shown
// would be the key of another name. Shown in a label, a name is elided in the middle so that a
// long one cannot make a window wider than the screen (the field itself scrolls).
#pragma once

#include <QString>

#include <optional>

class QLineEdit;
class QWidget;

namespace lockscope {

// Lifts the field's length limit (names are never cut on input).
void acceptWholeNames(QLineEdit* edit);

// `text` with its middle replaced by "…" when longer than `maxChars`; a surrogate pair is never
// split. For labels, messages and list cells that show a name; never for hashing.
QString elideMiddle(const QString& text, qsizetype maxChars = 120);

// "1 lock", "2 locks": English counts without a translation file (tr("%n locks") says "1 locks").
QString counted(qint64 n, const QString& one, const QString& many);

// A modal "enter a name" prompt whose field takes names of any length; nullopt when canceled.
std::optional<QString> askName(QWidget* parent, const QString& title, const QString& label, const QString& initial = {});

}  // namespace lockscope
