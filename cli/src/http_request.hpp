// The requests the exporter's HTTP server takes: HTTP/1.0 and 1.1 GET and HEAD without a body,
// one per connection, with a head of at most max_request_head bytes. Anything else is refused
// with the status that says why, never guessed at.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace pglock::cli {

inline constexpr std::size_t max_request_head = 8192;

struct HttpRequest {
    std::string method;         // "GET" or "HEAD"
    std::string path;           // the target before '?', exactly as sent (not decoded)
    std::string query;          // after '?', as sent
    std::string authorization;  // the Authorization header, "" when there is none
};

struct HttpRefusal {
    int status = 400;
    std::string message;  // one line, for the body
};

// The length of the request head at the start of `received` (request line, headers and the empty
// line that ends them; lines end in CRLF or LF), or nullopt while it is not complete.
std::optional<std::size_t> request_head_length(std::string_view received);

// The head as request_head_length() measured it.
std::variant<HttpRequest, HttpRefusal> parse_request_head(std::string_view head);

// A parameter of a query string (application/x-www-form-urlencoded: '+' is a space, %XX a byte),
// decoded whole: `value` is absent when the query does not have it. `error` says why the query
// cannot be read (a bad escape anywhere, the parameter given twice); then `value` is absent too.
struct QueryParameter {
    std::optional<std::string> value;
    std::string error;
};
QueryParameter query_parameter(std::string_view query, std::string_view name);

}  // namespace pglock::cli
