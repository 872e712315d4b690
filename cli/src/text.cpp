#include "pglock_cli/text.hpp"

#include <cstdint>

#include "pglock/text.hpp"

namespace pglock::cli {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

}  // namespace

std::string json_quote(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() + 2);
    out += '"';
    while (!bytes.empty()) {
        const std::size_t n = decode_utf8(bytes).length;
        if (n == 0) {
            out += "\\ufffd";
            bytes.remove_prefix(1);
            continue;
        }
        if (n == 1) {
            const auto c = static_cast<unsigned char>(bytes[0]);
            if (c == '"' || c == '\\') {
                out += '\\';
                out += static_cast<char>(c);
            } else if (c < 0x20 || c == 0x7F) {
                out += "\\u00";
                out += hex_digits[c >> 4];
                out += hex_digits[c & 0xF];
            } else {
                out += static_cast<char>(c);
            }
        } else {
            out.append(bytes.substr(0, n));
        }
        bytes.remove_prefix(n);
    }
    out += '"';
    return out;
}

std::string hex_bytes(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        out += hex_digits[c >> 4];
        out += hex_digits[c & 0xF];
    }
    return out;
}

std::string tsv_escape(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (char c : bytes) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '\t': out += "\\t"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            default: out += c;
        }
    }
    return out;
}

std::string one_line(std::string_view message) {
    std::string out;
    bool pending_space = false, pending_break = false;
    for (char c : message) {
        if (c == '\n' || c == '\r') {
            pending_break = true;
        } else if (c == ' ' || c == '\t') {
            pending_space = true;
        } else {
            if (!out.empty()) {
                if (pending_break) out += "; ";
                else if (pending_space) out += ' ';
            }
            pending_space = pending_break = false;
            out += c;
        }
    }
    return out;
}

}  // namespace pglock::cli
