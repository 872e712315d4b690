#include "pglock_cli/connection.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>

#include "pglock/conninfo.hpp"
#include "pglock/error.hpp"
#include "pglock_cli/text.hpp"

namespace pglock::cli {

namespace {

// libpq's own connect_timeout setting, from the DSN or else PGCONNECT_TIMEOUT. The library
// applies it too; reading it here makes a malformed value a clear CLI error up front.
std::optional<std::string> libpq_connect_timeout(const std::string& dsn) {
    for (const ConninfoOption& o : dsn_options(dsn)) {
        if (o.keyword == "connect_timeout" && !o.value.empty()) return o.value;
    }
    if (const char* env = std::getenv("PGCONNECT_TIMEOUT"); env && *env) return std::string(env);
    return std::nullopt;
}

}  // namespace

std::vector<ConninfoOption> dsn_options(const std::string& dsn) {
    if (dsn.empty()) return {};
    // conninfo_error's message: libpq's, with any password in the string masked (libpq quotes
    // a malformed URI whole).
    if (auto why = conninfo_error(dsn)) throw Error(Errc::connection_failed, "invalid --dsn: " + one_line(*why));
    auto options = conninfo_options(dsn);
    if (!options) throw Error(Errc::connection_failed, "invalid --dsn: out of memory");
    return std::move(*options);
}

PoolOptions pool_options_for(const std::string& dsn, std::size_t max_size, bool pooler_check) {
    PoolOptions options;
    options.max_size = max_size;
    options.refuse_transaction_pooler = pooler_check;
    options.connect_timeout = std::chrono::seconds(10);
    if (auto text = libpq_connect_timeout(dsn)) {
        char* end = nullptr;
        errno = 0;
        const long seconds = std::strtol(text->c_str(), &end, 10);
        // libpq's own range (an int): PGCONNECT_TIMEOUT is not checked by conninfo_error.
        if (end == text->c_str() || *end != '\0' || errno == ERANGE || seconds > std::numeric_limits<int>::max())
            throw Error(Errc::connection_failed, "invalid connect_timeout value: \"" + *text + "\"");
        if (seconds <= 0) {
            options.connect_timeout = std::chrono::hours(24 * 365);  // libpq: wait indefinitely
        } else {
            options.connect_timeout = std::chrono::seconds(seconds < 2 ? 2 : seconds);
        }
    }
    return options;
}

}  // namespace pglock::cli
