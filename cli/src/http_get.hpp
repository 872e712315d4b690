// `status --metrics-url`: one plain HTTP GET of an application's /metrics page. Deliberately
// small: http:// only (no TLS), no proxies (the *_proxy variables are not read: the page is
// fetched from exactly the host named), no redirects, one bounded request.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace pglock::cli {

struct HttpTarget {
    std::string host;  // without brackets for IPv6
    std::string port;  // "80" when the URL has none
    std::string path;  // from the first '/', "/metrics" when the URL has no path
};

// "http://HOST[:PORT][/PATH]" -> target. Throws UsageError naming --metrics-url for anything
// else (https, user:password@, a fragment, a bad port).
HttpTarget parse_http_url(const std::string& url);

struct HttpLimits {
    std::chrono::milliseconds timeout{5000};  // the whole request: resolve, connect, last byte
    std::size_t max_bytes = std::size_t(8) << 20;
};

// The body of a 200 response. Throws std::runtime_error with the reason (connect refused, the
// deadline, a status other than 200, a page over max_bytes, a chunked reply).
std::string http_get(const HttpTarget& target, const HttpLimits& limits = {});

}  // namespace pglock::cli
