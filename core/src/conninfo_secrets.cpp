#include "pglock/conninfo_secrets.hpp"

#include <libpq-fe.h>

#include "pglock/conninfo.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

namespace pglock {
namespace {

using Options = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;

// Asked once: the set does not change while the process runs.
const std::vector<std::string>& secret_keywords() {
    static const std::vector<std::string> keywords = [] {
        std::vector<std::string> out;
        Options defaults(PQconndefaults(), &PQconninfoFree);
        for (const PQconninfoOption* o = defaults.get(); o && o->keyword; ++o) {
            if (o->dispchar && std::strchr(o->dispchar, '*')) out.emplace_back(o->keyword);
        }
        // PQconndefaults() fails only out of memory; never let that make every secret public.
        if (out.empty()) out = {"password", "sslpassword"};
        return out;
    }();
    return keywords;
}

bool is_uri(std::string_view s) { return s.starts_with("postgresql://") || s.starts_with("postgres://"); }

std::string percent_decoded(std::string_view v) {
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
}

// A URI's authority (between "://" and the path or query), or "" for a conninfo.
std::string_view authority(std::string_view s) {
    if (!is_uri(s)) return {};
    const std::size_t start = s.find("://") + 3;
    const std::size_t end = s.find_first_of("/?", start);
    return s.substr(start, end == std::string_view::npos ? s.npos : end - start);
}

bool uri_has_password(std::string_view s) {
    const std::string_view a = authority(s);
    const std::size_t at = a.rfind('@');
    if (at == std::string_view::npos) return false;
    return a.find('@') != at || a.substr(0, at).find(':') != std::string_view::npos;
}

// keyword = value pairs for a secret keyword, read from the text without libpq (so strings it
// refuses are covered): conninfo keywords, quoted or not, and URI query parameters.
std::vector<std::string> keyword_values(std::string_view s) {
    std::vector<std::string> out;
    for (const std::string& keyword : secret_keywords()) {
        for (std::size_t pos = s.find(keyword); pos != std::string_view::npos; pos = s.find(keyword, pos + 1)) {
            std::size_t i = pos + keyword.size();
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
            if (!value.empty()) out.push_back(std::move(value));
        }
    }
    return out;
}

}  // namespace

bool conninfo_keyword_is_secret(std::string_view keyword) {
    const auto& keywords = secret_keywords();
    return std::find(keywords.begin(), keywords.end(), keyword) != keywords.end();
}

bool conninfo_has_secret(const std::string& conninfo) {
    if (uri_has_password(conninfo)) return true;
    const auto options = conninfo_options(conninfo);
    if (!options) return !keyword_values(conninfo).empty();
    return std::any_of(options->begin(), options->end(),
                       [](const ConninfoOption& o) { return !o.value.empty() && conninfo_keyword_is_secret(o.keyword); });
}

std::string conninfo_without_secrets(const std::string& conninfo) {
    if (!conninfo_has_secret(conninfo)) return conninfo;
    const std::string_view a = authority(conninfo);
    if (a.find('@') != a.rfind('@')) return {};  // libpq would keep part of the password as the host
    auto options = conninfo_options(conninfo);
    if (!options) return {};
    std::erase_if(*options, [](const ConninfoOption& o) { return conninfo_keyword_is_secret(o.keyword); });
    return conninfo_string(*options);
}

std::vector<std::string> conninfo_secret_texts(const std::string& conninfo) {
    std::vector<std::string> out;
    auto add = [&](std::string_view raw) {
        if (raw.empty()) return;
        out.emplace_back(raw);
        out.push_back(percent_decoded(raw));
    };
    const std::string_view a = authority(conninfo);
    if (const std::size_t last = a.rfind('@'); last != std::string_view::npos) {
        const std::string_view userinfo = a.substr(0, last);
        if (const std::size_t colon = userinfo.find(':'); colon != std::string_view::npos) {
            const std::string_view meant = userinfo.substr(colon + 1);  // up to the last '@'
            add(meant);
            for (std::size_t start = 0;;) {  // the pieces libpq takes for a password and a host
                const std::size_t at = meant.find('@', start);
                add(meant.substr(start, at == std::string_view::npos ? meant.npos : at - start));
                if (at == std::string_view::npos) break;
                start = at + 1;
            }
        } else if (userinfo.find('@') != std::string_view::npos) {
            // "user@secret@host": no ':' at all, yet the text after the first '@' is no host.
            add(userinfo.substr(userinfo.find('@') + 1));
        }
    }
    for (std::string& v : keyword_values(conninfo)) add(v);
    if (const auto options = conninfo_options(conninfo)) {
        for (const ConninfoOption& o : *options) {
            if (conninfo_keyword_is_secret(o.keyword)) add(o.value);
        }
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.size() != y.size() ? x.size() > y.size() : x < y; });
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::string redact_secrets(std::string text, const std::string& conninfo) {
    // Longest first, so that a secret containing another is hidden whole. Every occurrence goes,
    // even inside unrelated words: a mangled message is better than a leaked secret.
    for (const std::string& secret : conninfo_secret_texts(conninfo)) {
        for (std::size_t pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos + 3)) {
            text.replace(pos, secret.size(), "***");
        }
    }
    return text;
}

}  // namespace pglock
