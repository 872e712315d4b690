#include "models/server_text.hpp"

#include <string>

#include "pglock/text.hpp"

namespace lockscope {

namespace {

QString q(const std::string& utf8) { return QString::fromUtf8(utf8.data(), static_cast<qsizetype>(utf8.size())); }

bool isSqlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace

QString serverText(std::string_view bytes) { return q(pglock::display_text(bytes)); }

QString serverText(const QString& text) { return serverText(std::string_view(text.toStdString())); }

QString serverQuery(std::string_view query) {
    std::string folded;
    folded.reserve(query.size());
    bool space = false;
    for (const char c : query) {
        if (isSqlSpace(c)) {
            space = !folded.empty();
            continue;
        }
        if (space) folded += ' ';
        space = false;
        folded += c;
    }
    return serverText(folded);
}

QString serverMessage(std::string_view message) { return q(pglock::display_line(message)); }

QString serverMessage(const QString& message) { return serverMessage(std::string_view(message.toStdString())); }

}  // namespace lockscope
