#include "exporter_config.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "pglock/conninfo.hpp"
#include "pglock/conninfo_secrets.hpp"
#include "pglock_cli/text.hpp"
#include "verbs.hpp"

namespace pglock::cli {

namespace {

std::string_view trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r");
    return s.substr(first, last - first + 1);
}

// A bare word (no '=', no URI scheme) is a service name from pg_service.conf.
std::string conninfo_of(std::string_view value) {
    const bool uri = value.starts_with("postgresql://") || value.starts_with("postgres://");
    if (!uri && value.find('=') == std::string_view::npos && value.find_first_of(" \t'\\") == std::string_view::npos)
        return "service=" + std::string(value);
    return std::string(value);
}

}  // namespace

bool valid_target_name(std::string_view name) {
    if (name.empty() || name.size() > 128) return false;
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

std::vector<ExporterTarget> parse_exporter_config(std::string_view text, const std::string& origin) {
    std::vector<ExporterTarget> targets;
    std::set<std::string, std::less<>> names;
    std::size_t number = 0;
    while (!text.empty()) {
        ++number;
        const auto end = text.find('\n');
        const std::string_view line = trim(text.substr(0, end));
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        if (line.empty() || line.front() == '#') continue;
        const std::string where = "--config " + origin + " line " + std::to_string(number) + ": ";
        const auto eq = line.find('=');
        if (eq == std::string_view::npos)
            throw UsageError(where + "expected NAME = CONNINFO (or NAME = SERVICE)");
        const std::string_view name = trim(line.substr(0, eq));
        const std::string_view value = trim(line.substr(eq + 1));
        if (!valid_target_name(name))
            throw UsageError(where + "target name must be 1-128 letters, digits, '.', '_' or '-', got \"" +
                             one_line(name) + "\"");
        if (!names.insert(std::string(name)).second)
            throw UsageError(where + "target \"" + std::string(name) + "\" is defined twice");
        if (value.empty()) throw UsageError(where + "target \"" + std::string(name) + "\" has no connection string");
        ExporterTarget target{std::string(name), conninfo_of(value)};
        // Before libpq's own check: its complaint could quote the secret.
        if (conninfo_has_secret(target.conninfo))
            throw UsageError(where + "target \"" + target.name +
                             "\" carries a password or another secret; put it in ~/.pgpass, the service file or "
                             "PGPASSWORD, never in the exporter's config");
        if (auto why = conninfo_error(target.conninfo))
            throw UsageError(where + "target \"" + target.name + "\": " + one_line(redact_secrets(*why, target.conninfo)));
        targets.push_back(std::move(target));
    }
    if (targets.empty()) throw UsageError("--config " + origin + ": no targets (lines NAME = CONNINFO)");
    return targets;
}

std::vector<ExporterTarget> load_exporter_config(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError("--config " + path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw UsageError("--config " + path + ": read error");
    return parse_exporter_config(text.str(), path);
}

}  // namespace pglock::cli
