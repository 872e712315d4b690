// CSV of history rows, RFC 4180: CRLF line ends, a field in double quotes when it holds a comma,
// a double quote, CR or LF (a double quote inside doubled), everything else as is. UTF-8.
//
// Columns: kind,name,name_escaped,key,form,pid,application,user,mode,started,ended,duration_s,waited_on,
//          name_source
// - name: the name itself when it is printable UTF-8 (commas, quotes, CR and LF included, quoted
//   as above); otherwise (invalid UTF-8, NUL or other control bytes) its escaped list form.
//   Empty when no name is known (a holder's cut name is not one).
// - name_escaped: always the catalog's list form (names::escapeName), which gives back the exact
//   bytes: a spreadsheet user reads `name`, a script that needs the bytes reads this one.
// - started, ended: UTC ISO 8601 with milliseconds; duration_s: seconds with millisecond digits.
// - waited_on: the blocking pids separated by spaces (waits only).
// - name_source: where the name came from, as the views say it: catalog, collision, taken here,
//   holder (verified from its application_name), holder prefix, or empty. The last column, so
//   that readers of the columns before it keep their positions.
#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include "history/history_record.hpp"

namespace lockscope::history::csv {

// One field, quoted when RFC 4180 needs it.
QByteArray field(QByteArrayView value);
QByteArray headerLine();           // with its CRLF
QByteArray line(const Record& r);  // with its CRLF
// The `name` column's text for a name (see above).
QByteArray readableName(const QByteArray& name);

}  // namespace lockscope::history::csv
