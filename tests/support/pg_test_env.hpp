// Where the tests find their PostgreSQL server: PGLOCK_TEST_DSN when set, else the private
// cluster that the ctest fixture (tests/pg/fixture) started and described in the build dir.
#pragma once

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace pglock::test {

inline std::optional<std::string> read_first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (in && std::getline(in, line) && !line.empty()) return line;
    return std::nullopt;
}

// The DSN of the test server, or nullopt when there is none (the test then fails loudly: a
// server test that silently skips would prove nothing).
inline std::optional<std::string> test_dsn() {
    if (const char* env = std::getenv("PGLOCK_TEST_DSN"); env && *env) return std::string(env);
    return read_first_line(std::string(PGLOCK_TEST_BUILD_DIR) + "/pgtest.dsn");
}

// A hot standby of the test server, when the standby fixture made one (or PGLOCK_TEST_STANDBY_DSN).
inline std::optional<std::string> standby_dsn() {
    if (const char* env = std::getenv("PGLOCK_TEST_STANDBY_DSN"); env && *env) return std::string(env);
    return read_first_line(std::string(PGLOCK_TEST_BUILD_DIR) + "/pgtest-standby.dsn");
}

}  // namespace pglock::test

namespace pglock::test {

// The private cluster's directory (for restarting it), or nullopt when the tests run against
// PGLOCK_TEST_DSN, whose server they must not restart.
inline std::optional<std::string> private_cluster_dir() {
    if (const char* env = std::getenv("PGLOCK_TEST_DSN"); env && *env) return std::nullopt;
    return read_first_line(std::string(PGLOCK_TEST_BUILD_DIR) + "/pgtest.dir");
}

inline std::string cluster_script() { return std::string(PGLOCK_TEST_SOURCE_DIR) + "/tests/pg/cluster"; }

}  // namespace pglock::test
