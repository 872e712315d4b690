// Lock names nobody should use but somebody will: 1 MiB long, invalid UTF-8, NUL bytes, control
// characters, right-to-left marks. The key must still be exactly the Go package's (checked against
// the server's own sha256(), not against our code), the lock must work on a real server, and the
// log line must stay one line with every odd byte escaped.
#include <QtTest>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "core_test_util.hpp"

using pgt::granted_pids;
using pgt::guarded;
using pgt::RawConn;

namespace {

std::string hex_of(const std::string& bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 0x0f];
    }
    return out;
}

// Every odd name, labelled for failure messages. Built at run time: the NUL bytes must survive.
std::vector<std::pair<const char*, std::string>> odd_names() {
    using namespace std::string_literals;
    return {
        {"1 MiB", std::string(1 << 20, 'x')},
        {"invalid UTF-8", "job-\xff\xfe\xc3(-\xed\xa0\x80"s},
        {"NUL bytes", "a\0b\0\0c"s},
        {"only a NUL", "\0"s},
        {"control characters", "line1\nline2\r\t\x1b[31mred\x07"s},
        {"right-to-left marks", "invoice-\u202Egpj.exe\u200F-\u061C"s},
        {"quotes and equals", "name=\"x\" level=ERROR msg=\"forged\""s},
    };
}

// Runs fn with stderr redirected to a file and returns what was written.
template <class F>
std::string capture_stderr(F&& fn) {
    std::FILE* tmp = std::tmpfile();
    std::fflush(stderr);
    const int saved = ::dup(2);
    ::dup2(::fileno(tmp), 2);
    try {
        fn();
    } catch (...) {
        std::fflush(stderr);
        ::dup2(saved, 2);
        ::close(saved);
        std::fclose(tmp);
        throw;
    }
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::rewind(tmp);
    std::string out;
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, tmp)) > 0;) out.append(buf, n);
    std::fclose(tmp);
    return out;
}

}  // namespace

class TestOddNames : public QObject {
    Q_OBJECT

    std::string dsn_;

private slots:
    void initTestCase() { PGT_REQUIRE_DSN(dsn_); }

    void empty_name_is_refused() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            try {
                pglock::Lock lock(pool, "");
                QFAIL("an empty name was accepted");
            } catch (const pglock::Error& e) {
                QCOMPARE(e.code(), pglock::Errc::empty_name);
            }
        });
    }

    // The server computes the Go package's key from the raw bytes (sent hex-encoded, so NULs and
    // invalid UTF-8 arrive intact): first 8 bytes of SHA-256, big-endian, as a signed bigint.
    void key_matches_the_servers_sha256() {
        guarded([&] {
            RawConn obs(dsn_);
            for (const auto& [label, name] : odd_names()) {
                const std::string server_key = obs.scalar(
                    "SELECT ('x' || substr(encode(sha256(decode($1, 'hex')), 'hex'), 1, 16))::bit(64)::bigint",
                    {hex_of(name)});
                QVERIFY2(server_key == std::to_string(pglock::key_of(name)), label);
            }
        });
    }

    // Each odd name locks, shows up in pg_locks under its key, blocks a second pool, and releases.
    void odd_names_lock_and_release_on_a_real_server() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            pglock::Pool other(dsn_);
            RawConn obs(dsn_);
            for (const auto& [label, name] : odd_names()) {
                pglock::Lock lock(pool, name);
                auto guard = lock.try_acquire();
                QVERIFY2(guard.has_value(), label);
                QCOMPARE(granted_pids(obs, pglock::key_of(name)), std::vector<int>{guard->backend_pid()});
                QCOMPARE(guard->name(), name);
                pglock::Lock rival(other, name);
                QVERIFY2(!rival.try_acquire().has_value(), label);
                QVERIFY2(!guard->release(), label);
                QVERIFY2(granted_pids(obs, pglock::key_of(name)).empty(), label);
            }
        });
    }

    // The slog-style stderr logger writes one line per event whatever the name holds: a newline
    // or a forged `msg=` in a name must not make a second, fake log line or field.
    void log_escapes_are_the_expected_ones() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            pglock::LockOptions options;
            options.logger = pglock::make_stderr_logger(pglock::LogLevel::debug);
            const std::string out = capture_stderr([&] {
                pglock::Lock lock(pool, std::string("a\0\xff\u202E\n\"b", 9), options);
                QVERIFY(lock.try_acquire().has_value());
            });
            QVERIFY2(out.find("name=\"a\\x00\\xff\\u202e\\n\\\"b\"") != std::string::npos, out.c_str());
        });
    }

    void log_lines_escape_odd_bytes() {
        guarded([&] {
            pglock::Pool pool(dsn_);
            for (const auto& [label, name] : odd_names()) {
                if (name.size() > 4096) continue;  // one line of 1 MiB proves nothing more
                pglock::LockOptions options;
                options.logger = pglock::make_stderr_logger(pglock::LogLevel::debug);
                const std::string out = capture_stderr([&] {
                    pglock::Lock lock(pool, name, options);
                    auto guard = lock.try_acquire();
                    QVERIFY(guard.has_value());
                });
                QVERIFY2(out.find("msg=\"lock: acquired\"") != std::string::npos, label);
                // acquired + released: exactly two lines, so nothing in the name broke a line.
                QCOMPARE(std::count(out.begin(), out.end(), '\n'), 2L);
                for (unsigned char c : out) {
                    QVERIFY2(c == '\n' || c >= 0x20, (std::string(label) + ": raw control byte in the log").c_str());
                }
                // Bytes that are not UTF-8 and invisible reordering marks are escaped, not passed on.
                QVERIFY2(out.find('\xff') == std::string::npos, label);
                QVERIFY2(out.find("\u202E") == std::string::npos, label);
                QVERIFY2(out.find("\u200F") == std::string::npos, label);
                QVERIFY2(out.find("msg=\"forged\"") == std::string::npos, label);
                // A forged "level=ERROR" stays inside the quoted name: no unescaped quote ends it early.
                for (auto at = out.find("\" level=ERROR"); at != std::string::npos; at = out.find("\" level=ERROR", at + 1))
                    QVERIFY2(at > 0 && out[at - 1] == '\\', label);
            }
        });
    }
};

QTEST_GUILESS_MAIN(TestOddNames)
#include "test_odd_names.moc"
