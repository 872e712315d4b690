// `pglock status --catalog FILE` reads the name lists lockscope exports: the same rules (BOM, blank
// trimming, `#` comments, backslash escapes), so every name the app exports names its held lock
// in the CLI. The list is written by lockscope's own exporter (CatalogStore::exportText), and the
// locks are held by a plain libpq session, the way a service would hold them.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_test_support.hpp"
#include "stores/catalog_store.hpp"

using namespace clitest;

namespace {

// The JSON lock of a bigint key in one `status --json` poll, or an empty object.
QJsonObject find_lock(const QJsonArray& locks, std::int64_t key) {
    for (const auto& v : locks) {
        const QJsonObject o = v.toObject();
        if (o["form"].toString() == "bigint" && o["key"].toInteger() == key) return o;
    }
    return {};
}

// The bytes of the JSON string literal at the start of `json` (after its opening quote). Read by
// hand because Qt's JSON reader drops a leading U+FEFF from a string, and a name may start so.
QByteArray json_string_bytes(QByteArrayView json) {
    QByteArray out;
    for (qsizetype i = 0; i < json.size() && json[i] != '"'; ++i) {
        if (json[i] != '\\') {
            out += json[i];
            continue;
        }
        const char e = json[++i];
        if (e == 'u') {  // the CLI writes \u00XX for control bytes and \ufffd: no surrogate pairs
            out += QString(QChar(char16_t(json.sliced(i + 1, 4).toByteArray().toUInt(nullptr, 16)))).toUtf8();
            i += 4;
        } else {
            out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
        }
    }
    return out;
}

// The exact bytes of the name the CLI gave the lock of `key` in one `status --json` line:
// name_hex when the name is not UTF-8, else the "name" string as written.
QByteArray name_bytes(const QJsonObject& lock, const QByteArray& line, std::int64_t key) {
    if (lock.contains("name_hex")) return QByteArray::fromHex(lock["name_hex"].toString().toLatin1());
    const QByteArray at = "\"key\":" + QByteArray::number(qint64(key)) + ",";
    const qsizetype name = line.indexOf("\"name\":\"", line.indexOf(at));
    return name < 0 ? QByteArray() : json_string_bytes(QByteArrayView(line).sliced(name + 8));
}

std::int64_t key_of_bytes(const QByteArray& name) { return pglock::key_of(std::string(name.constData(), name.size())); }

// Holds every name's lock on one session, runs `status --json --catalog list`, and fails on each
// held name the CLI does not give back from the catalog, byte for byte. `stderr_out` gets what
// the CLI wrote to stderr.
void check_cli_names_all(const QString& list, const QList<QByteArray>& held, QByteArray* stderr_out = nullptr) {
    RawConn holder(dsn());
    for (const QByteArray& name : held) holder.lock(key_of_bytes(name));
    const auto r = run({"status", "--json", "--catalog", list, "--dsn", dsn()});
    QVERIFY2(r.code == 0, r.err.constData());
    if (stderr_out) *stderr_out = r.err;
    const QByteArray line = r.out.split('\n').first();
    const QJsonArray locks = QJsonDocument::fromJson(line).object()["locks"].toArray();
    QStringList missed;
    for (const QByteArray& name : held) {
        const std::int64_t key = key_of_bytes(name);
        const QJsonObject lock = find_lock(locks, key);
        const QString want = QString::fromLatin1(name.toHex());
        if (lock.isEmpty()) missed << "not listed: " + want;
        else if (lock["name_source"].toString() != "catalog") missed << "not named from the catalog: " + want;
        else if (const QByteArray got = name_bytes(lock, line, key); got != name)
            missed << "named " + QString::fromLatin1(got.toHex()) + " instead of " + want;
    }
    QVERIFY2(missed.isEmpty(), qPrintable(QString("%1 of %2 names: ").arg(missed.size()).arg(held.size()) +
                                          missed.mid(0, 8).join("; ")));
    for (const QByteArray& name : held) QVERIFY(holder.unlock(key_of_bytes(name)));
}

}  // namespace

class TestCliLockscopeExport : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // Every byte value 1..255 inside, at the start and at the end of a name (a leading '#' or
    // space, a trailing tab, a lone byte that is not UTF-8), plus the names an operator really
    // has: a backslash, a tab, edge spaces, a leading BOM, a right-to-left override.
    void cli_names_every_name_of_a_lockscope_export() {
        const QByteArray base = unique_name("export").toUtf8();
        QList<QByteArray> names{base + ".x\\y", base + ".\tx", "   " + base + ".padded  ", "\xEF\xBB\xBF" + base + ".bom",
                                base + ".\xE2\x80\xAE.rlo", base + ".x\\x41y"};
        for (int b = 1; b <= 255; ++b) {
            const QByteArray c(1, char(b));
            names << c + base + ".byte" + c + "mid" + c;
        }
        const QString db = dir_.filePath("catalog.sqlite");
        const QString list = dir_.filePath("export.txt");
        {
            lockscope::CatalogStore store(db);
            QVERIFY2(store.isOpen(), qPrintable(store.errorString()));
            for (const QByteArray& name : names) QVERIFY2(store.add(name) == lockscope::CatalogStore::AddResult::added, qPrintable(store.errorString()));
            QVERIFY2(store.exportText(list), qPrintable(store.errorString()));
        }
        check_cli_names_all(list, names);
    }

    // A list written by hand in the format lockscope imports: escapes are decoded and the blanks
    // around a name are not part of it; a line the format cannot read is skipped with a warning
    // that names it, and the rest is still read (docs/cli.md).
    void cli_reads_a_hand_written_list_as_lockscope_does() {
        const QByteArray base = unique_name("hand").toUtf8();
        const QString list = dir_.filePath("hand.txt");
        QFile f(list);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("\xEF\xBB\xBF# names of " + base + "\r\n" + base + ".x\\x41y\r\n   " + base + ".padded  \n\t" + base +
                ".tab\\tin\\\\side\t\nbad\\q\n");
        f.close();
        QByteArray err;
        check_cli_names_all(list, {base + ".xAy", base + ".padded", base + ".tab\tin\\side"}, &err);
        QCOMPARE(err, "pglock: warning: catalog " + list.toUtf8() +
                          ": line 5: unknown escape \\q; the escapes are \\\\ \\n \\r \\t \\xHH \\uXXXX; skipped\n");
    }
};

QTEST_GUILESS_MAIN(TestCliLockscopeExport)
#include "test_cli_lockscope_export.moc"
