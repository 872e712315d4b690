// The CLI's own helpers: duration parsing, name escaping for JSON and TSV, one-line errors and
// the DSN's connect_timeout. No server.
#include <QtTest>

#include <cstdlib>

#include "catalog_file.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/conninfo.hpp"
#include "pglock/error.hpp"
#include "pglock/key.hpp"
#include "pglock_cli/connection.hpp"
#include "pglock_cli/duration.hpp"
#include "pglock_cli/text.hpp"

using namespace std::chrono_literals;
using namespace pglock::cli;

// QtTest prints QByteArray and integers on failure, not std::string or optionals.
static QByteArray S(const std::string& s) { return QByteArray::fromStdString(s); }
static QByteArray B(const char* s) { return QByteArray(s); }
static qint64 timeout_s(const char* dsn) {
    return std::chrono::duration_cast<std::chrono::seconds>(pool_options_for(dsn, 2).connect_timeout).count();
}
static qint64 D(const char* text) {
    const auto d = parse_duration(text);
    return d ? qint64(d->count()) : -1;
}

class TestCliUnits : public QObject {
    Q_OBJECT
private slots:
    void durations_parse() {
        QCOMPARE(D("500ms"), qint64(std::chrono::nanoseconds(500ms).count()));
        QCOMPARE(D("30s"), qint64(std::chrono::nanoseconds(30s).count()));
        QCOMPARE(D("5m"), qint64(std::chrono::nanoseconds(5min).count()));
        QCOMPARE(D("1h"), qint64(std::chrono::nanoseconds(1h).count()));
        QCOMPARE(D("1.5s"), qint64(std::chrono::nanoseconds(1500ms).count()));
        QCOMPARE(D("1m30s"), qint64(std::chrono::nanoseconds(90s).count()));
        QCOMPARE(D("250us"), qint64(std::chrono::nanoseconds(250us).count()));
        QCOMPARE(D("0"), qint64(std::chrono::nanoseconds(0ns).count()));
    }
    void durations_reject() {
        for (const char* bad : {"", "5", "ms", "-1s", "1x", "1 s", "1.s.", "s5", "1e3s", "99999999999h"})
            QVERIFY2(!parse_duration(bad), bad);
    }
    // Durations are added to the clock's now (a deadline, the end of a hold): beyond max_duration
    // (365 days) that sum could overflow, so they are refused, not wrapped.
    void durations_out_of_range() {
        QCOMPARE(D("8760h"), qint64(std::chrono::nanoseconds(8760h).count()));
        QCOMPARE(D("525600m"), qint64(std::chrono::nanoseconds(8760h).count()));
        for (const char* big : {"9223372036s", "8760h1us", "8761h", "2562047h", "31536000.001s", "9223372036854ms"}) {
            QVERIFY2(!parse_duration(big), big);
            QVERIFY2(duration_error(big).find("out of range") != std::string::npos, big);
        }
        QVERIFY2(duration_error("soon").find("not a duration") != std::string::npos, "soon");
        QVERIFY(duration_error("8760h").empty());
    }
    void durations_format() {
        // One style for the CLI, lockscope's views and its history (pglock/duration_text.hpp).
        QCOMPARE(S(pglock::duration_text(0ms)), QByteArray("0ms"));
        QCOMPARE(S(pglock::duration_text(300ms)), QByteArray("300ms"));
        QCOMPARE(S(pglock::duration_text(999600us)), QByteArray("1s"));
        QCOMPARE(S(pglock::duration_text(1500ms)), QByteArray("1.5s"));
        QCOMPARE(S(pglock::duration_text(1234ms)), QByteArray("1.2s"));
        QCOMPARE(S(pglock::duration_text(2s)), QByteArray("2s"));
        QCOMPARE(S(pglock::duration_text(59960ms)), QByteArray("1m"));
        QCOMPARE(S(pglock::duration_text(90s)), QByteArray("1m30s"));
        QCOMPARE(S(pglock::duration_text(185.5)), QByteArray("3m5s"));
        QCOMPARE(S(pglock::duration_text(3600s)), QByteArray("1h"));
        QCOMPARE(S(pglock::duration_text(3720s)), QByteArray("1h2m"));
        QCOMPARE(S(pglock::duration_text(2 * 86400s + 3 * 3600s + 5s)), QByteArray("2d3h"));
        QCOMPARE(S(pglock::duration_text(-3s)), QByteArray("0ms"));
        QCOMPARE(S(pglock::duration_text(4.2)), QByteArray("4.2s"));
    }

    void json_quote_plain_and_escapes() {
        QCOMPARE(S(json_quote("orders.daily-rollup")), B("\"orders.daily-rollup\""));
        QCOMPARE(S(json_quote("a\"b\\c")), B("\"a\\\"b\\\\c\""));
        QCOMPARE(S(json_quote(std::string("\n\t\x01\x7f", 4))), B("\"\\u000a\\u0009\\u0001\\u007f\""));
        QCOMPARE(S(json_quote(std::string("a\0b", 3))), B("\"a\\u0000b\""));
        QCOMPARE(S(json_quote("z\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\x92")), B("\"z\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\x92\""));
        // C1 controls (U+009B is a whole CSI) and bidi or zero-width characters: escaped too, so
        // that JSON on a terminal is as inert as the text.
        QCOMPARE(S(json_quote("a\xc2\x9b" "31m\xc2\x85\xe2\x80\xae" "b\xe2\x80\x8b\xef\xbb\xbf")),
                 B(R"("a\u009b31m\u0085\u202eb\u200b\ufeff")"));
    }
    void json_quote_invalid_utf8() {
        QCOMPARE(S(json_quote("\xff")), B("\"\\ufffd\""));
        QCOMPARE(S(json_quote("a\xc3")), B("\"a\\ufffd\""));            // truncated
        QCOMPARE(S(json_quote("\xc0\xaf")), B("\"\\ufffd\\ufffd\""));    // overlong '/'
        QCOMPARE(S(json_quote("\xed\xa0\x80")), B("\"\\ufffd\\ufffd\\ufffd\""));  // surrogate
        QCOMPARE(S(json_quote("\xf4\x90\x80\x80")), B("\"\\ufffd\\ufffd\\ufffd\\ufffd\""));  // > U+10FFFF
        QVERIFY(is_valid_utf8("z\xc3\xa9\xf0\x9f\x94\x92"));
        QVERIFY(!is_valid_utf8("\xed\xa0\x80"));
        QCOMPARE(S(hex_bytes("\xff\x01ok")), B("ff016f6b"));
    }
    void tsv_escape_keeps_fields_apart() {
        QCOMPARE(S(tsv_escape("a\tb\nc\rd\\e")), B("a\\tb\\nc\\rd\\\\e"));
        QCOMPARE(S(tsv_escape("plain.name")), B("plain.name"));
        // Every other control, hidden code point and byte that is not UTF-8 as COPY's \xHH, which
        // reads back as the same bytes; other UTF-8 as is.
        QCOMPARE(S(tsv_escape("a\x1b[2J\x07\xc2\x9b\xe2\x80\xae\x9b\xff\xc3\xa9")),
                 B(R"(a\x1b[2J\x07\xc2\x9b\xe2\x80\xae\x9b\xff)" "\xc3\xa9"));
    }
    void one_line_folds_libpq_messages() {
        QCOMPARE(S(one_line("connection to server failed: Connection refused\n\tIs the server running?\n")),
                 B("connection to server failed: Connection refused; Is the server running?"));
        QCOMPARE(S(one_line("  x  y \n")), B("x y"));
    }

    void connect_timeout_from_dsn() {
        qunsetenv("PGCONNECT_TIMEOUT");
        QCOMPARE(timeout_s(""), qint64(10));
        QCOMPARE(pool_options_for("", 3).max_size, std::size_t(3));
        QCOMPARE(timeout_s("host=x connect_timeout=5"), qint64(5));
        QCOMPARE(timeout_s("postgresql://x/db?connect_timeout=7"), qint64(7));
        QCOMPARE(timeout_s("host=x connect_timeout=1"), qint64(2));  // libpq's minimum
        QVERIFY(timeout_s("host=x connect_timeout=0") > 3600);        // libpq: no limit
        qputenv("PGCONNECT_TIMEOUT", "4");
        QCOMPARE(timeout_s("host=x"), qint64(4));
        QCOMPARE(timeout_s("host=x connect_timeout=6"), qint64(6));   // the DSN wins
        qunsetenv("PGCONNECT_TIMEOUT");
    }
    // The redaction itself, for every message that quotes a URI (libpq's parse errors, its
    // host lookup errors): a password with a raw '@' is hidden whole, including the part libpq
    // took for the host.
    void redaction_hides_a_password_with_a_raw_at() {
        const std::string uri = "postgresql://u:wrong@pw-XYZ@db.example/app";
        const std::string message =
            pglock::redact_password("could not translate host name \"pw-XYZ@db.example\" to address", uri);
        QVERIFY2(message.find("pw-XYZ") == std::string::npos, message.c_str());
        QVERIFY2(message.find("db.example") != std::string::npos, message.c_str());
        const std::string quoted = pglock::redact_password("bad URI: \"" + uri + "\"", uri);
        QVERIFY2(quoted.find("wrong") == std::string::npos && quoted.find("pw-XYZ") == std::string::npos, quoted.c_str());
        const std::string encoded = pglock::redact_password("x u:a%40b@h y a@b", "postgresql://u:a%40b@h/db");
        QCOMPARE(S(encoded), B("x u:***@h y ***"));
        const auto why = pglock::conninfo_error(uri);
        QVERIFY(why);
        QVERIFY2(why->find("pw-XYZ") == std::string::npos && why->find("wrong") == std::string::npos, why->c_str());
        QVERIFY(pglock::conninfo_has_password(uri));
        QCOMPARE(S(pglock::conninfo_without_password(uri)), B(""));  // nothing of it can be kept safely
        QVERIFY(!pglock::conninfo_error("postgresql://u:a%40b@h/db"));  // encoded: fine
        QVERIFY(!pglock::conninfo_error("postgresql://u@h/db?application_name=a@b"));  // '@' after the host
    }

    // libpq takes connect_timeout as an int: a bigger value is its parse error, never a
    // duration that overflows the deadline made from it (status gave up at once with
    // "deadline exceeded" for connect_timeout=10000000000).
    void connect_timeout_out_of_range_is_an_error() {
        qunsetenv("PGCONNECT_TIMEOUT");
        QCOMPARE(timeout_s("host=x connect_timeout=2147483647"), qint64(2147483647));
        for (const char* dsn : {"host=x connect_timeout=10000000000", "host=x connect_timeout=2147483648",
                                "postgresql://x/db?connect_timeout=99999999999999999999"}) {
            try {
                pool_options_for(dsn, 2);
                QFAIL(dsn);
            } catch (const pglock::Error& e) {
                QVERIFY2(std::string(e.what()).find("invalid integer value") != std::string::npos, e.what());
            }
        }
        qputenv("PGCONNECT_TIMEOUT", "10000000000");
        try {
            pool_options_for("host=x", 2);
            QFAIL("PGCONNECT_TIMEOUT=10000000000 taken");
        } catch (const pglock::Error& e) {
            QVERIFY2(std::string(e.what()).find("invalid connect_timeout value") != std::string::npos, e.what());
        }
        qunsetenv("PGCONNECT_TIMEOUT");
    }

    void malformed_dsn_is_a_connection_error() {
        try {
            pool_options_for("this is not a dsn", 2);
            QFAIL("no error");
        } catch (const pglock::Error& e) {
            QVERIFY(e.code() == pglock::Errc::connection_failed);
            QVERIFY2(std::string(e.what()).find("missing \"=\"") != std::string::npos, e.what());
        }
    }

    // A text catalog is a name list as lockscope exports it: BOM, CRLF, blanks around a name and
    // comments dropped, escapes decoded; a line it cannot read is skipped with its number, not
    // the whole file refused.
    void text_catalog_reads_the_name_list_format() {
        const auto c = pglock::cli::parse_text_catalog(
            "\xEF\xBB\xBF# comment\r\n  bars.x\\x41y \r\n\n\tbars.padded\t\nbad\\q\nlatin\xE9\n", "names.txt");
        QCOMPARE(c.names(), (std::vector<std::string>{"bars.xAy", "bars.padded"}));
        const auto lines = pglock::cli::catalog_warnings(c, "names.txt");
        QCOMPARE(lines.size(), std::size_t(2));
        QVERIFY2(lines[0].starts_with("pglock: warning: catalog names.txt: line 5: unknown escape \\q"), lines[0].c_str());
        QVERIFY2(lines[0].ends_with("; skipped"), lines[0].c_str());
        QVERIFY2(lines[1].starts_with("pglock: warning: catalog names.txt: line 6: not valid UTF-8"), lines[1].c_str());
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, pglock::cli::parse_text_catalog(std::string_view("a\0b", 3), "x"));
    }

    // A catalog whose names share a key warns once per key. Real names do not collide, so the
    // pairs are given with their keys.
    void catalog_collisions_warn() {
        using pglock::cli::Catalog;
        const Catalog injected(std::vector<pglock::NamedKey>{{"a.job", 42}, {"b.job", 42}, {"c.job", 7}, {"a.job", 42}});
        QCOMPARE(injected.size(), std::size_t(3));
        QCOMPARE(injected.collisions().size(), std::size_t(1));
        QVERIFY(injected.find(42) && *injected.find(42) == "a.job");  // the first name still wins
        const auto lines = pglock::cli::catalog_warnings(injected, "names.txt");
        QCOMPARE(lines.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(lines[0]),
                 QStringLiteral("pglock: warning: catalog names.txt: key 42 is shared by \"a.job\" and \"b.job\": "
                                "they take the same lock"));
        const Catalog real(std::vector<std::string>{"orders.daily-rollup", "session.warmup"});
        QVERIFY(real.collisions().empty());
        QVERIFY(pglock::cli::catalog_warnings(real, "x").empty());
        QVERIFY(real.find(pglock::key_of("session.warmup")));
    }
};

QTEST_GUILESS_MAIN(TestCliUnits)
#include "test_cli_units.moc"
