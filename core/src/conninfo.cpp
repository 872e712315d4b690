#include "pglock/conninfo.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace pglock {
namespace {

struct Parsed {
    std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options{nullptr, &PQconninfoFree};
    std::string error;
};

Parsed parse(const std::string& conninfo) {
    Parsed out;
    char* err = nullptr;
    out.options.reset(PQconninfoParse(conninfo.c_str(), &err));
    if (!out.options) {
        out.error = err ? err : "out of memory";
        while (!out.error.empty() && (out.error.back() == '\n' || out.error.back() == ' ')) out.error.pop_back();
    }
    if (err) PQfreemem(err);
    return out;
}

bool is_uri(std::string_view s) {
    return s.starts_with("postgresql://") || s.starts_with("postgres://");
}

// Where a URI's user information ends. libpq ends it at the first '@' before any '/'; but a
// password with a raw '@' in it ("u:wrong@pw@host") means its writer meant the last '@' before
// the host ends ('/' or '?'), and libpq then takes the rest of the password for the host name.
struct UriUserinfo {
    std::string_view userinfo;  // up to the last '@': the writer's reading
    bool raw_at = false;        // more than one '@' before the host ends
};

std::optional<UriUserinfo> uri_userinfo(std::string_view s) {
    if (!is_uri(s)) return std::nullopt;
    const std::size_t start = s.find("://") + 3;
    const std::size_t slash = s.find('/', start);
    const std::size_t first_at = s.find('@', start);
    if (first_at == std::string_view::npos || (slash != std::string_view::npos && first_at > slash))
        return std::nullopt;
    const std::size_t host_end = s.find_first_of("/?", first_at);
    const std::size_t last_at = s.substr(0, host_end).rfind('@');
    return UriUserinfo{s.substr(start, last_at - start), last_at != first_at};
}

// Passwords as they appear in the text, found without libpq so that strings libpq refuses are
// covered too: a URI's user:password@ (raw and %-decoded) and any password= value (a URI query
// parameter or a conninfo keyword, quoted or not).
std::vector<std::string> password_texts(std::string_view s) {
    std::vector<std::string> out;
    auto add = [&](std::string v) {
        if (!v.empty()) out.push_back(std::move(v));
    };
    auto decoded = [](std::string_view v) {
        std::string d;
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (v[i] == '%' && i + 2 < v.size() && std::isxdigit(static_cast<unsigned char>(v[i + 1])) &&
                std::isxdigit(static_cast<unsigned char>(v[i + 2]))) {
                d += static_cast<char>(std::stoi(std::string(v.substr(i + 1, 2)), nullptr, 16));
                i += 2;
            } else {
                d += v[i];
            }
        }
        return d;
    };
    if (const auto u = uri_userinfo(s)) {
        if (const std::size_t colon = u->userinfo.find(':'); colon != std::string_view::npos) {
            const std::string_view password = u->userinfo.substr(colon + 1);
            add(std::string(password));
            add(decoded(password));
            // With raw '@'s, libpq's password is the first piece and it quotes the others as
            // part of the host ("pw-XYZ@host"): each piece is a secret on its own.
            for (std::size_t from = 0; u->raw_at && from <= password.size();) {
                const std::size_t at = std::min(password.find('@', from), password.size());
                add(std::string(password.substr(from, at - from)));
                add(decoded(password.substr(from, at - from)));
                from = at + 1;
            }
        }
    }
    for (std::size_t pos = s.find("password"); pos != std::string_view::npos; pos = s.find("password", pos + 1)) {
        std::size_t i = pos + 8;
        while (i < s.size() && s[i] == ' ') ++i;
        if (i >= s.size() || s[i] != '=') continue;
        ++i;
        while (i < s.size() && s[i] == ' ') ++i;
        std::string value;
        if (i < s.size() && s[i] == '\'') {
            for (++i; i < s.size() && s[i] != '\''; ++i) {
                if (s[i] == '\\' && i + 1 < s.size()) ++i;
                value += s[i];
            }
        } else {
            while (i < s.size() && s[i] != ' ' && s[i] != '&') value += s[i++];
        }
        add(decoded(value));
        add(std::move(value));
    }
    return out;
}

}  // namespace

namespace {

// libpq checks these values only when a connection starts (after a DNS lookup, perhaps):
// checking them here lets a dialog or a CLI refuse the string at once, in libpq's own words.
std::optional<std::string> value_error(const PQconninfoOption* options) {
    // An int, as libpq parses it (leading and trailing blanks allowed); a value beyond int's
    // range is its error too, never a duration that overflows a deadline made from it.
    auto integer = [](std::string_view v) {
        std::size_t i = 0;
        while (i < v.size() && v[i] == ' ') ++i;
        const bool negative = i < v.size() && v[i] == '-';
        if (i < v.size() && (v[i] == '-' || v[i] == '+')) ++i;
        const std::size_t digits = i;
        long long value = 0;
        while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
            value = value * 10 + (v[i++] - '0');
            if (value > static_cast<long long>(std::numeric_limits<int>::max()) + (negative ? 1 : 0)) return false;
        }
        if (i == digits) return false;
        while (i < v.size() && v[i] == ' ') ++i;
        return i == v.size();
    };
    auto one_of = [](std::string_view v, std::initializer_list<std::string_view> allowed) {
        return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
    };
    for (const PQconninfoOption* o = options; o->keyword; ++o) {
        if (!o->val) continue;
        const std::string_view key = o->keyword, v = o->val;
        if ((key == "host" || key == "hostaddr") && v.find('=') != v.npos) {
            // "host= port=1" gives host the value "port=1": libpq skips blanks after "=". Say
            // so instead of letting a DNS lookup of "port=1" fail later.
            return "host \"" + std::string(v) + "\" looks like another setting: write an empty value as " +
                   std::string(key) + "=''";
        }
        if (key == "port") {
            // A list, one per host; an empty entry means the default port.
            std::size_t start = 0;
            for (;;) {
                const std::size_t comma = v.find(',', start);
                const std::string_view one = v.substr(start, comma == v.npos ? v.npos : comma - start);
                if (!one.empty() && !integer(one)) {
                    return "invalid integer value \"" + std::string(one) + "\" for connection option \"port\"";
                }
                if (comma == v.npos) break;
                start = comma + 1;
            }
        } else if ((key == "connect_timeout" || key.starts_with("keepalives") || key == "tcp_user_timeout") &&
                   !v.empty() && !integer(v)) {
            return "invalid integer value \"" + std::string(v) + "\" for connection option \"" + std::string(key) + "\"";
        } else if (key == "sslmode" && !v.empty() &&
                   !one_of(v, {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"})) {
            return "invalid sslmode value: \"" + std::string(v) + "\"";
        } else if (key == "gssencmode" && !v.empty() && !one_of(v, {"disable", "prefer", "require"})) {
            return "invalid gssencmode value: \"" + std::string(v) + "\"";
        } else if (key == "channel_binding" && !v.empty() && !one_of(v, {"disable", "prefer", "require"})) {
            return "invalid channel_binding value: \"" + std::string(v) + "\"";
        } else if (key == "target_session_attrs" && !v.empty() &&
                   !one_of(v, {"any", "read-write", "read-only", "primary", "standby", "prefer-standby"})) {
            return "invalid target_session_attrs value: \"" + std::string(v) + "\"";
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::vector<ConninfoOption>> conninfo_options(const std::string& conninfo) {
    const Parsed p = parse(conninfo);
    if (!p.options) return std::nullopt;
    std::vector<ConninfoOption> out;
    for (const PQconninfoOption* o = p.options.get(); o->keyword; ++o) {
        if (o->val) out.push_back({o->keyword, o->val});
    }
    return out;
}

std::string conninfo_quote(std::string_view value) {
    std::string out = "'";
    for (const char c : value) {
        if (c == '\\' || c == '\'') out += '\\';
        out += c;
    }
    return out + "'";
}

std::string conninfo_string(const std::vector<ConninfoOption>& options) {
    std::string out;
    for (const ConninfoOption& o : options) {
        if (!out.empty()) out += ' ';
        out += o.keyword + "=" + conninfo_quote(o.value);
    }
    return out;
}

std::string conninfo_without_password(const std::string& conninfo) {
    Parsed p = parse(conninfo);
    if (!p.options) return password_texts(conninfo).empty() ? conninfo : std::string();
    // libpq parsed part of the password into the host: no setting of it is safe to keep.
    if (const auto u = uri_userinfo(conninfo); u && u->raw_at && !password_texts(conninfo).empty()) return {};
    if (!conninfo_has_password(conninfo)) return conninfo;
    std::string out;
    for (PQconninfoOption* o = p.options.get(); o->keyword; ++o) {
        if (!o->val || std::strcmp(o->keyword, "password") == 0) continue;
        if (!out.empty()) out += ' ';
        out += std::string(o->keyword) + "=" + conninfo_quote(o->val);
    }
    return out;
}

std::string redact_password(std::string message, const std::string& conninfo, const std::string& extra) {
    std::vector<std::string> secrets = password_texts(conninfo);
    if (!extra.empty()) secrets.push_back(extra);
    // Longest first, so that a password containing another is hidden whole. Every occurrence
    // goes, even inside unrelated words: a mangled message is better than a leaked password.
    std::sort(secrets.begin(), secrets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const std::string& secret : secrets) {
        for (std::size_t pos = message.find(secret); pos != std::string::npos; pos = message.find(secret, pos + 3)) {
            message.replace(pos, secret.size(), "***");
        }
    }
    return message;
}

std::optional<std::string> conninfo_error(const std::string& conninfo) {
    // libpq would take what follows the first '@' for the host, and its lookup error would quote
    // it: say what is wrong instead, without quoting any of it.
    if (const auto u = uri_userinfo(conninfo); u && u->raw_at) {
        return "more than one \"@\" before the host in the URI: write an @ that belongs to the user name or "
               "password as %40";
    }
    Parsed p = parse(conninfo);
    if (p.options) {
        if (auto why = value_error(p.options.get())) return redact_password(*why, conninfo);
        return std::nullopt;
    }
    std::string message = redact_password(p.error, conninfo);
    // libpq's words for "=value" name an empty option; say what is wrong with the text.
    if (message == "invalid connection option \"\"") message += ": no keyword before \"=\"";
    return message;
}

bool conninfo_has_password(const std::string& conninfo) {
    if (const auto u = uri_userinfo(conninfo); u && u->raw_at && !password_texts(conninfo).empty()) return true;
    Parsed p = parse(conninfo);
    if (!p.options) return false;
    for (PQconninfoOption* o = p.options.get(); o->keyword; ++o) {
        if (std::strcmp(o->keyword, "password") == 0 && o->val && *o->val) return true;
    }
    return false;
}

std::string conninfo_label(const std::string& conninfo) {
    Parsed p = parse(conninfo);
    if (!p.options) return {};
    auto value = [&](const char* keyword) -> std::string {
        for (PQconninfoOption* o = p.options.get(); o->keyword; ++o) {
            if (std::strcmp(o->keyword, keyword) == 0 && o->val) return o->val;
        }
        return {};
    };
    if (const std::string service = value("service"); !service.empty()) return "service=" + service;
    std::string label;
    if (const std::string user = value("user"); !user.empty()) label += user + "@";
    label += value("host").empty() ? std::string("localhost") : value("host");
    if (const std::string port = value("port"); !port.empty()) label += ":" + port;
    if (const std::string db = value("dbname"); !db.empty()) label += "/" + db;
    return label;
}

}  // namespace pglock
