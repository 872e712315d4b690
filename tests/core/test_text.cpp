// The one rule for showing server text (pglock/text.hpp), byte class by byte class, and its
// message form; the CLI and lockscope tests show it on every path a tenant or a hostile server
// can reach (test_cli_hostile_text, test_hostile_text). No server.
#include <QtTest>

#include <string>

#include "pglock/name_list.hpp"
#include "pglock/text.hpp"

namespace {

QByteArray S(const std::string& s) { return QByteArray::fromStdString(s); }
QByteArray B(const char* s) { return QByteArray(s); }

}  // namespace

class TestText : public QObject {
    Q_OBJECT
private slots:
    void plain_text_passes_unchanged() {
        QCOMPARE(S(pglock::display_text("billing:invoice-run")), B("billing:invoice-run"));
        QCOMPARE(S(pglock::display_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92")), B("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92"));
        QCOMPARE(S(pglock::display_text(R"(C:\dir "quoted")")), B(R"(C:\dir "quoted")"));  // display only: `\` stays
        QVERIFY(pglock::is_display_safe("caf\xc3\xa9 \\"));
        QVERIFY(pglock::is_display_safe(""));
    }

    void controls_are_escaped() {
        QCOMPARE(S(pglock::display_text("a\nb\rc\td")), B(R"(a\nb\rc\td)"));
        QCOMPARE(S(pglock::display_text("\x1b[2J\x07\x7f")), B(R"(\x1b[2J\x07\x7f)"));
        QCOMPARE(S(pglock::display_text(std::string("a\0b", 3))), B(R"(a\x00b)"));
        QVERIFY(!pglock::is_display_safe("a\x1b"));
    }

    void c1_bidi_and_invisible_code_points_are_escaped() {
        QCOMPARE(S(pglock::display_text("\xc2\x9b" "31m\xc2\x85")), B(R"(\u009b31m\u0085)"));
        QCOMPARE(S(pglock::display_text("invoice\xe2\x80\xae" "fdp.exe")), B(R"(invoice\u202efdp.exe)"));
        QCOMPARE(S(pglock::display_text("\xe2\x81\xa6x\xe2\x81\xa9\xe2\x80\x8b\xef\xbb\xbf\xe2\x80\xa8")),
                 B(R"(\u2066x\u2069\u200b\ufeff\u2028)"));
        QVERIFY(!pglock::is_display_safe("\xe2\x80\xae"));
    }

    void bytes_that_are_not_utf8_are_escaped_one_by_one() {
        QCOMPARE(S(pglock::display_text("\x9b" "7m\xff")), B(R"(\x9b7m\xff)"));
        QCOMPARE(S(pglock::display_text("a\xc3")), B(R"(a\xc3)"));                // cut
        QCOMPARE(S(pglock::display_text("\xc0\xaf")), B(R"(\xc0\xaf)"));          // overlong
        QCOMPARE(S(pglock::display_text("\xed\xa0\x80")), B(R"(\xed\xa0\x80)"));  // surrogate
        QVERIFY(!pglock::is_display_safe("\xff"));
    }

    void the_rule_is_idempotent() {
        const std::string hostile = "ev\x1b[2J|\xc2\x9b|\xe2\x80\xae|\n|\x9b\xff|\\x1b";
        const std::string once = pglock::display_text(hostile);
        QCOMPARE(S(pglock::display_text(once)), S(once));
        QVERIFY(pglock::is_display_safe(once));
    }

    void messages_become_one_line_then_follow_the_rule() {
        QCOMPARE(S(pglock::display_line("ERROR:  m\x1b[2J\nDETAIL:  \xe2\x80\xae\n\tHINT:  \xff\n")),
                 B(R"(ERROR: m\x1b[2J; DETAIL: \u202e; HINT: \xff)"));
    }

    // The name list's lines are the same rule plus `\` and the list's own edge cases.
    void a_name_list_line_is_the_rule_plus_its_edges() {
        QCOMPARE(S(pglock::escape_name("a\\b\x1b\xe2\x80\xae\xff")), B(R"(a\\b\x1b\u202e\xff)"));
        QCOMPARE(S(pglock::escape_name("#x ")), B(R"(\x23x\x20)"));
        QCOMPARE(S(pglock::escape_name("\xef\xbb\xbfx\xef\xbb\xbf")), B(R"(\xef\xbb\xbfx\ufeff)"));
        QCOMPARE(S(pglock::escape_name("  ")), B(R"(\x20\x20)"));
    }
};

QTEST_GUILESS_MAIN(TestText)
#include "test_text.moc"
