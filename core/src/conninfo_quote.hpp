// One conninfo value in keyword=value form: single-quoted, backslash and quote escaped (libpq's
// rule). Internal to core: conninfo.cpp and conninfo_secrets.cpp both rebuild conninfo strings.
#pragma once

#include <string>

namespace pglock::detail {

inline std::string conninfo_quoted(const std::string& value) {
    std::string out = "'";
    for (char c : value) {
        if (c == '\\' || c == '\'') out += '\\';
        out += c;
    }
    return out + "'";
}

}  // namespace pglock::detail
