// Text from a server (application_name, user, state, client host, query text, table and schema
// names in a lock's description, a holder's name, error messages) as every view of the app shows
// it: core's one rule, pglock::display_text (pglock/text.hpp), applied to the bytes and converted
// to QString once. Controls, C1, bidi and zero-width characters and bytes that are not UTF-8 are
// shown escaped, never obeyed, and a newline never splits a label. That is separate from HTML:
// a tooltip still goes through plainToolTip() and a label that shows such text is still
// Qt::PlainText (plain_text.hpp).
#pragma once

#include <QString>

#include <string_view>

namespace lockscope {

// The bytes as the server sent them.
QString serverText(std::string_view bytes);
// Text that already is a QString (a history row read back, a redacted message): the same rule on
// its UTF-8.
QString serverText(const QString& text);
// A query: its whitespace runs (line breaks and indentation of any SQL) shown as one space, then
// the rule.
QString serverQuery(std::string_view query);
// A message (libpq's, the server's ERROR with DETAIL and HINT lines) on one line:
// pglock::display_line. Redact secrets first.
QString serverMessage(std::string_view message);
QString serverMessage(const QString& message);

}  // namespace lockscope
