// `pglock exporter --config FILE`: the servers one exporter probes, by name.
//
//   # NAME = conninfo, a postgresql:// URI, or a bare service name (pg_service.conf)
//   orders-primary = host=db1.internal dbname=orders user=monitor
//   billing        = billing
//
// Passwords never go into this file (it is read by Prometheus operators, copied into config
// management, shown in diffs): libpq finds them in ~/.pgpass, the service file or PGPASSWORD.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pglock::cli {

struct ExporterTarget {
    std::string name;      // what /probe?target= takes: letters, digits, '.', '_', '-'
    std::string conninfo;  // passed to libpq; a bare service name became "service=NAME"
};

// 1-128 letters, digits, '.', '_' or '-': what a target may be called, in the file and in
// /probe?target=.
bool valid_target_name(std::string_view name);

// Parses the text of FILE (`origin` names it in messages). Throws UsageError naming the line for
// a malformed line, a bad or repeated name, a connection string libpq refuses, or one that
// carries a password or another secret (the message never repeats the secret). An empty file
// (no targets) is refused too: an exporter without targets can only answer 400.
std::vector<ExporterTarget> parse_exporter_config(std::string_view text, const std::string& origin);

// Reads and parses FILE; UsageError when it cannot be read.
std::vector<ExporterTarget> load_exporter_config(const std::string& path);

}  // namespace pglock::cli
