// parse_key_input / looks_like_key: what an operator types into the resolver box. No server.
// The orders.daily-rollup vectors were computed independently with Python:
//   k = int.from_bytes(hashlib.sha256(b"orders.daily-rollup").digest()[:8], 'big', signed=True)
//   -> -7132652647757890940 = 0x9d03ba3510243a84 (two's complement), classid 2634267189, objid 270809732
#include <QtTest>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "pglock/key.hpp"
#include "pglock/resolve.hpp"

namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kRollup = -7132652647757890940LL;

std::string hex_pattern(std::int64_t key) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(static_cast<std::uint64_t>(key)));
    return buf;
}

}  // namespace

class TestResolve : public QObject {
    Q_OBJECT

private slots:
    void accepts_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<qint64>("key");
        QTest::addColumn<int>("form");
        const int dec = int(pglock::KeyInputForm::decimal), hex = int(pglock::KeyInputForm::hex),
                  pair = int(pglock::KeyInputForm::pair);

        QTest::newRow("decimal rollup") << QByteArray("-7132652647757890940") << qint64(kRollup) << dec;
        QTest::newRow("decimal zero") << QByteArray("0") << qint64(0) << dec;
        QTest::newRow("decimal minus zero") << QByteArray("-0") << qint64(0) << dec;
        QTest::newRow("decimal plus") << QByteArray("+42") << qint64(42) << dec;
        QTest::newRow("decimal leading zeros") << QByteArray("00042") << qint64(42) << dec;
        QTest::newRow("INT64_MAX") << QByteArray("9223372036854775807") << qint64(kMax) << dec;
        QTest::newRow("INT64_MIN") << QByteArray("-9223372036854775808") << qint64(kMin) << dec;
        QTest::newRow("whitespace around") << QByteArray(" \t 12345 \r\n") << qint64(12345) << dec;

        QTest::newRow("hex pattern rollup") << QByteArray("0x9d03ba3510243a84") << qint64(kRollup) << hex;
        QTest::newRow("hex upper") << QByteArray("0X9D03BA3510243A84") << qint64(kRollup) << hex;
        QTest::newRow("hex all ones is -1") << QByteArray("0xffffffffffffffff") << qint64(-1) << hex;
        QTest::newRow("hex INT64_MIN pattern") << QByteArray("0x8000000000000000") << qint64(kMin) << hex;
        QTest::newRow("hex INT64_MAX") << QByteArray("0x7fffffffffffffff") << qint64(kMax) << hex;
        QTest::newRow("hex short") << QByteArray("0x10") << qint64(16) << hex;
        QTest::newRow("hex leading zeros beyond 16") << QByteArray("0x0000000000000000001") << qint64(1) << hex;
        QTest::newRow("negative hex") << QByteArray("-0x10") << qint64(-16) << hex;
        QTest::newRow("negative hex INT64_MIN") << QByteArray("-0x8000000000000000") << qint64(kMin) << hex;
        QTest::newRow("negative hex of the rollup magnitude") << QByteArray("-0x62fc45caefdbc57c") << qint64(kRollup) << hex;

        QTest::newRow("pair slash") << QByteArray("2634267189/270809732") << qint64(kRollup) << pair;
        QTest::newRow("pair comma") << QByteArray("2634267189,270809732") << qint64(kRollup) << pair;
        QTest::newRow("pair parens") << QByteArray("(2634267189, 270809732)") << qint64(kRollup) << pair;
        QTest::newRow("pair spaced slash") << QByteArray("  2634267189 / 270809732 ") << qint64(kRollup) << pair;
        QTest::newRow("pair labelled") << QByteArray("classid=2634267189 objid=270809732") << qint64(kRollup) << pair;
        QTest::newRow("pair labelled reversed, comma, case")
            << QByteArray("OBJID = 270809732, ClassId=2634267189") << qint64(kRollup) << pair;
        QTest::newRow("pair max oids is -1") << QByteArray("4294967295/4294967295") << qint64(-1) << pair;
        QTest::newRow("pair INT64_MIN") << QByteArray("2147483648/0") << qint64(kMin) << pair;
        QTest::newRow("pair zero") << QByteArray("0/0") << qint64(0) << pair;
        // As the views display a lock: the Key tooltip, and the int4-pair form (KeyInputForm 4,
        // int4_pair), whose key only carries its pg_locks tag.
        QTest::newRow("tooltip bigint") << QByteArray("pg_locks: classid 2634267189, objid 270809732, objsubid 1")
                                        << qint64(kRollup) << pair;
        QTest::newRow("labels with spaces") << QByteArray("classid 2634267189 objid 270809732") << qint64(kRollup) << pair;
        const int int4 = 4;
        QTest::newRow("int4 pair") << QByteArray("(1, 2) int4 pair") << qint64(4294967298) << int4;
        QTest::newRow("int4 pair negative, max") << QByteArray("(-7, 2147483647) int4 pair") << qint64(-27917287425) << int4;
        QTest::newRow("int4 pair no parens, case") << QByteArray(" 1,2 INT4 PAIR ") << qint64(4294967298) << int4;
        QTest::newRow("tooltip int4 pair") << QByteArray("pg_locks: classid 1, objid 2, objsubid 2") << qint64(4294967298) << int4;
    }
    void accepts() {
        QFETCH(QByteArray, text);
        QFETCH(qint64, key);
        QFETCH(int, form);
        const pglock::KeyInput in = pglock::parse_key_input(text.toStdString());
        QVERIFY2(in.ok(), in.error.c_str());
        QCOMPARE(*in.key, key);
        QVERIFY(in.error.empty());
        QCOMPARE(int(in.form), form);
        QVERIFY(pglock::looks_like_key(text.toStdString()));
    }

    // Rejected input: the message says why, and whether the UI should treat the text as a key
    // that is wrong (key_like) or as a lock name.
    void rejects_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("message");  // a substring of the error
        QTest::addColumn<bool>("key_like");

        QTest::newRow("empty") << QByteArray("") << "empty" << false;
        QTest::newRow("only spaces") << QByteArray(" \t\r\n") << "empty" << false;
        QTest::newRow("INT64_MAX + 1") << QByteArray("9223372036854775808") << "out of range for a bigint key" << true;
        QTest::newRow("INT64_MIN - 1") << QByteArray("-9223372036854775809") << "out of range for a bigint key" << true;
        QTest::newRow("huge") << QByteArray("99999999999999999999999") << "out of range for a bigint key" << true;
        QTest::newRow("hex 17 digits") << QByteArray("0x1ffffffffffffffff") << "out of range for a bigint key" << true;
        QTest::newRow("negative hex beyond INT64_MIN") << QByteArray("-0x8000000000000001") << "out of range" << true;
        QTest::newRow("bare 0x") << QByteArray("0x") << "hex digits" << true;
        // Text that was meant as a number is a key error, never silently hashed as a name.
        QTest::newRow("hex garbage") << QByteArray("0xZZ") << "'Z' is not a hex digit" << true;
        QTest::newRow("hex garbage lower") << QByteArray("0xzz") << "'z' is not a hex digit" << true;
        QTest::newRow("hex garbage and more") << QByteArray("0xzz!") << "'z' is not a hex digit" << true;
        QTest::newRow("hex then a stray") << QByteArray("0x1f!") << "'!' is not a hex digit" << true;
        QTest::newRow("negative hex garbage") << QByteArray("-0xg") << "'g' is not a hex digit" << true;
        QTest::newRow("digits with a stray letter") << QByteArray("12a") << "'a' in a number" << true;
        QTest::newRow("digits with a stray inside") << QByteArray("-71326x52") << "'x' in a number" << true;
        QTest::newRow("digits with a stray sign") << QByteArray("123!") << "'!' in a number" << true;
        QTest::newRow("name") << QByteArray("orders.daily-rollup") << "not a number" << false;
        QTest::newRow("digits then letters") << QByteArray("12abc") << "not a number" << false;
        QTest::newRow("date-like name") << QByteArray("2024-01-01") << "not a number" << false;
        QTest::newRow("path-like name") << QByteArray("jobs/nightly") << "not a number" << false;
        QTest::newRow("half a number name") << QByteArray("123/abc") << "not a number" << false;
        QTest::newRow("sign alone") << QByteArray("-") << "not a number" << false;
        QTest::newRow("space inside") << QByteArray("12 34") << "' ' in a number" << true;
        QTest::newRow("letter then digits") << QByteArray("v2") << "not a number" << false;
        QTest::newRow("plain word") << QByteArray("zz") << "not a number" << false;
        QTest::newRow("digits with a stray non-ASCII letter") << QByteArray("12\xc3\xa9") << "'\xc3\xa9' in a number" << true;
        QTest::newRow("parenthesized words") << QByteArray("(draft) orders") << "not a number" << false;
        QTest::newRow("half pair trailing") << QByteArray("123/") << "needs two numbers" << true;
        QTest::newRow("half pair leading") << QByteArray("/123") << "needs two numbers" << true;
        QTest::newRow("half pair comma") << QByteArray("123,") << "needs two numbers" << true;
        QTest::newRow("half pair parens") << QByteArray("(123)") << "needs two numbers" << true;
        QTest::newRow("half pair labelled") << QByteArray("classid=123") << "needs two numbers" << true;
        QTest::newRow("unclosed paren") << QByteArray("(1, 2") << "closing )" << true;
        QTest::newRow("three numbers") << QByteArray("1/2/3") << "exactly two numbers" << true;
        QTest::newRow("classid too big") << QByteArray("4294967296/1") << "classid out of range" << true;
        QTest::newRow("objid too big") << QByteArray("1/4294967296") << "objid out of range" << true;
        QTest::newRow("negative classid") << QByteArray("-1/5") << "classid out of range" << true;
        QTest::newRow("labelled garbage value") << QByteArray("classid=abc objid=1") << "classid is not a number"
                                                << true;
        QTest::newRow("labelled twice") << QByteArray("classid=1 classid=2") << "given twice" << true;
        QTest::newRow("labelled unknown field") << QByteArray("classid=1 objtype=1") << "expected classid" << true;
        QTest::newRow("objsubid 3") << QByteArray("classid 1, objid 2, objsubid 3") << "objsubid is 1" << true;
        QTest::newRow("int4 out of range") << QByteArray("(1, 2147483648) int4 pair") << "int4 key" << true;
        QTest::newRow("int4 pair half") << QByteArray("(1) int4 pair") << "two int4" << true;
        QTest::newRow("a name ending in int4 pair") << QByteArray("legacy int4 pair") << "not a number" << false;
    }
    void rejects() {
        QFETCH(QByteArray, text);
        QFETCH(QString, message);
        QFETCH(bool, key_like);
        const pglock::KeyInput in = pglock::parse_key_input(text.toStdString());
        QVERIFY(!in.ok());
        QVERIFY(!in);
        QVERIFY2(QString::fromStdString(in.error).contains(message),
                 qPrintable(QStringLiteral("error was: ") + QString::fromStdString(in.error)));
        QCOMPARE(pglock::looks_like_key(text.toStdString()), key_like);
    }

    void nul_bytes_are_not_a_key() {
        const std::string text("12\0" "34", 5);
        QVERIFY(!pglock::parse_key_input(text).ok());
        QVERIFY(!pglock::looks_like_key(text));
    }

    // A purely numeric name is key-shaped: the UI, not the parser, forces it as a name, and
    // its name key differs from the number.
    void numeric_name_is_key_shaped() {
        QVERIFY(pglock::looks_like_key("12345"));
        QCOMPARE(*pglock::parse_key_input("12345").key, qint64(12345));
        QVERIFY(pglock::key_of(std::string_view("12345")) != 12345);
    }

    // Every way of writing a key gives that key back: decimal, the hex pattern, and the
    // classid/objid pair that tag_of shows, in all three pair spellings.
    void round_trip() {
        std::mt19937_64 rng(20240611);
        std::vector<std::int64_t> keys = {0, 1, -1, kMin, kMax, kMin + 1, kMax - 1, kRollup,
                                          pglock::key_of(std::string_view("session.warmup"))};
        for (int i = 0; i < 2000; ++i) keys.push_back(static_cast<std::int64_t>(rng()));
        for (std::int64_t key : keys) {
            const pglock::LockTag tag = pglock::tag_of(key);
            const std::string c = std::to_string(tag.classid), o = std::to_string(tag.objid);
            for (const std::string& text :
                 {std::to_string(key), hex_pattern(key), c + "/" + o, c + "," + o, "(" + c + ", " + o + ")",
                  "classid=" + c + " objid=" + o}) {
                const pglock::KeyInput in = pglock::parse_key_input(text);
                QVERIFY2(in.ok(), (text + ": " + in.error).c_str());
                QCOMPARE(*in.key, key);
                QVERIFY(pglock::looks_like_key(text));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestResolve)
#include "test_resolve.moc"
