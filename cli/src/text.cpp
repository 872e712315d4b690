#include "pglock_cli/text.hpp"

#include "pglock/text.hpp"

namespace pglock::cli {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// \uXXXX: every code point escaped here is in the Basic Multilingual Plane.
void append_u_escape(std::string& out, char32_t cp) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += hex_digits[(cp >> shift) & 0xF];
}

void append_x_escapes(std::string& out, std::string_view bytes) {
    for (const char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        out += "\\x";
        out += hex_digits[c >> 4];
        out += hex_digits[c & 0xF];
    }
}

}  // namespace

std::string json_quote(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() + 2);
    out += '"';
    while (!bytes.empty()) {
        const DecodedChar d = decode_utf8(bytes);
        if (d.length == 0) {
            out += "\\ufffd";
            bytes.remove_prefix(1);
            continue;
        }
        if (d.code_point == '"' || d.code_point == '\\') {
            out += '\\';
            out += static_cast<char>(d.code_point);
        } else if (is_hidden_code_point(d.code_point)) {
            append_u_escape(out, d.code_point);  // C0, DEL, and C1 or bidi: valid JSON all the same
        } else {
            out.append(bytes.substr(0, d.length));
        }
        bytes.remove_prefix(d.length);
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
    while (!bytes.empty()) {
        const DecodedChar d = decode_utf8(bytes);
        const std::size_t n = d.length ? d.length : 1;
        if (d.length == 0) append_x_escapes(out, bytes.substr(0, 1));
        else if (d.code_point == '\\') out += "\\\\";
        else if (d.code_point == '\t') out += "\\t";
        else if (d.code_point == '\n') out += "\\n";
        else if (d.code_point == '\r') out += "\\r";
        else if (is_hidden_code_point(d.code_point)) append_x_escapes(out, bytes.substr(0, n));
        else out.append(bytes.substr(0, n));
        bytes.remove_prefix(n);
    }
    return out;
}

std::string kv_value(std::string_view value) {
    const bool plain = !value.empty() && is_display_safe(value) && value.find_first_of(" \"\\=") == std::string_view::npos;
    return plain ? std::string(value) : json_quote(value);
}

}  // namespace pglock::cli
