#include "http_request.hpp"

#include <algorithm>
#include <cctype>

namespace pglock::cli {

namespace {

// RFC 9110 token characters (method and header names).
bool token_char(unsigned char c) {
    return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool token(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return token_char(static_cast<unsigned char>(c)); });
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<std::string> form_decoded(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            const int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

HttpRefusal refuse(int status, std::string message) { return {status, std::move(message)}; }

}  // namespace

std::optional<std::size_t> request_head_length(std::string_view received) {
    for (std::size_t i = received.find('\n'); i != std::string_view::npos; i = received.find('\n', i + 1)) {
        if (i + 1 < received.size() && received[i + 1] == '\n') return i + 2;
        if (i + 2 < received.size() && received[i + 1] == '\r' && received[i + 2] == '\n') return i + 3;
    }
    return std::nullopt;
}

std::variant<HttpRequest, HttpRefusal> parse_request_head(std::string_view head) {
    HttpRequest request;
    bool first = true, has_authorization = false;
    while (!head.empty()) {
        const auto end = head.find('\n');
        std::string_view line = head.substr(0, end);
        head = end == std::string_view::npos ? std::string_view{} : head.substr(end + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        for (const unsigned char c : line)
            if ((c < 0x20 && c != '\t') || c == 0x7f) return refuse(400, "control character in the request head");
        if (first) {
            first = false;
            const auto sp1 = line.find(' ');
            const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
            if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
                return refuse(400, "malformed request line");
            const std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1),
                                   version = line.substr(sp2 + 1);
            if (version != "HTTP/1.1" && version != "HTTP/1.0") return refuse(505, "HTTP/1.0 and HTTP/1.1 only");
            if (!token(method)) return refuse(400, "malformed method");
            if (method != "GET" && method != "HEAD") return refuse(405, "only GET and HEAD");
            if (target.empty() || target.front() != '/' || target.find('\t') != std::string_view::npos)
                return refuse(400, "the request target must be a path (/metrics)");
            request.method = std::string(method);
            const auto q = target.find('?');
            request.path = std::string(target.substr(0, q));
            if (q != std::string_view::npos) request.query = std::string(target.substr(q + 1));
            continue;
        }
        if (line.empty()) break;
        if (line.front() == ' ' || line.front() == '\t') return refuse(400, "folded header lines are not accepted");
        const auto colon = line.find(':');
        if (colon == std::string_view::npos || !token(line.substr(0, colon))) return refuse(400, "malformed header line");
        const std::string_view name = line.substr(0, colon), value = trim_ows(line.substr(colon + 1));
        // No body is read: a request that announces one is refused rather than half understood.
        if (iequals(name, "Transfer-Encoding")) return refuse(400, "a GET or HEAD request has no body");
        if (iequals(name, "Content-Length") && value != "0") return refuse(400, "a GET or HEAD request has no body");
        if (iequals(name, "Authorization")) {
            if (has_authorization) return refuse(400, "Authorization given twice");
            has_authorization = true;
            request.authorization = std::string(value);
        }
    }
    if (first) return refuse(400, "empty request");
    return request;
}

QueryParameter query_parameter(std::string_view query, std::string_view name) {
    QueryParameter out;
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        if (pair.empty()) continue;
        const auto eq = pair.find('=');
        const auto key = form_decoded(pair.substr(0, eq));
        const auto value = form_decoded(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
        if (!key || !value) return {std::nullopt, "a bad %-escape in the query"};
        if (*key != name) continue;
        if (out.value) return {std::nullopt, std::string(name) + " given twice"};
        out.value = *value;
    }
    return out;
}

}  // namespace pglock::cli
