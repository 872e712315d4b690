#include "stores/source_scanner.hpp"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <array>
#include <cstdint>

namespace lockscope::scan {
namespace {

// ---------------------------------------------------------------------------------------------
// Lexer: just enough of each language to know what is code, what is a comment and what a string
// literal holds. Numbers and character literals are lexed only so that their quotes and digits
// are not mistaken for strings.

enum class Kind { ident, str, punct, other };

struct Token {
    Kind kind = Kind::other;
    std::string_view text;  // ident / punct spelling
    std::string value;      // a string literal's decoded bytes
    std::string problem;    // a string literal that could not be decoded, and why
    int line = 0;
};

constexpr bool isIdentStart(unsigned char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}
constexpr bool isIdentChar(unsigned char c) noexcept { return isIdentStart(c) || (c >= '0' && c <= '9'); }
constexpr bool isDigit(unsigned char c) noexcept { return c >= '0' && c <= '9'; }
constexpr int hexValue(unsigned char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

void appendUtf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

class Lexer {
public:
    Lexer(std::string_view src, Language lang) : s_(src), lang_(lang) {}

    std::vector<Token> run() {
        const bool slashComments = lang_ != Language::hash;
        while (i_ < s_.size()) {
            const auto c = static_cast<unsigned char>(s_[i_]);
            if (c == '\n') {
                ++line_;
                ++i_;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                ++i_;
            } else if (slashComments && c == '/' && peek(1) == '/') {
                skipLine();
            } else if (slashComments && c == '/' && peek(1) == '*') {
                skipBlockComment();
            } else if (lang_ == Language::hash && c == '#') {
                skipLine();
            } else if (isIdentStart(c)) {
                identifier();
            } else if (isDigit(c) || (c == '.' && isDigit(static_cast<unsigned char>(peek(1))))) {
                number();
            } else if (c == '"') {
                if (lang_ == Language::hash && peek(1) == '"' && peek(2) == '"') quoted('"', true);
                else quoted('"', false);
            } else if (c == '`' && lang_ == Language::go) {
                goRaw();
            } else if (c == '`' && lang_ == Language::js) {
                quoted('`', true);
            } else if (c == '\'' && (lang_ == Language::js || lang_ == Language::hash)) {
                if (lang_ == Language::hash && peek(1) == '\'' && peek(2) == '\'') quoted('\'', true);
                else quoted('\'', false);
            } else if (c == '\'') {
                characterOrQuote();
            } else {
                punct();
            }
        }
        return std::move(tokens_);
    }

private:
    char peek(std::size_t ahead) const noexcept { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }

    void skipLine() {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
    }

    void skipBlockComment() {
        i_ += 2;
        while (i_ < s_.size() && !(s_[i_] == '*' && peek(1) == '/')) {
            if (s_[i_] == '\n') ++line_;
            ++i_;
        }
        i_ = std::min(i_ + 2, s_.size());
    }

    void identifier() {
        const std::size_t start = i_;
        while (i_ < s_.size() && isIdentChar(static_cast<unsigned char>(s_[i_]))) ++i_;
        const std::string_view id = s_.substr(start, i_ - start);
        if (lang_ == Language::cpp && i_ < s_.size()) {
            // String prefixes glue to the quote: R"(...)", u8"...", LR"x(...)x"; u8'a' too.
            const bool raw = id == "R" || id == "u8R" || id == "uR" || id == "UR" || id == "LR";
            const bool plain = id == "u8" || id == "u" || id == "U" || id == "L";
            if (s_[i_] == '"' && raw) return cppRaw();
            if (s_[i_] == '"' && plain) return quoted('"', false);
            if (s_[i_] == '\'' && plain) return characterOrQuote();
        }
        push(Kind::ident, id);
    }

    // A pp-number, loosely: digits, letters, '.', exponent signs and C++14 digit separators.
    void number() {
        const std::size_t start = i_;
        while (i_ < s_.size()) {
            const auto c = static_cast<unsigned char>(s_[i_]);
            const auto prev = i_ > start ? static_cast<unsigned char>(s_[i_ - 1]) : 0;
            if (isIdentChar(c) || c == '.') {
                ++i_;
            } else if ((c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P')) {
                ++i_;
            } else if (c == '\'' && lang_ == Language::cpp && isIdentChar(prev) &&
                       isIdentChar(static_cast<unsigned char>(peek(1)))) {
                ++i_;
            } else {
                break;
            }
        }
        push(Kind::other, s_.substr(start, i_ - start));
    }

    // 'x' or '\n' is a character literal; anything else (a Rust lifetime 'a, a stray quote) is
    // punctuation, so that one odd quote cannot swallow the rest of the line.
    void characterOrQuote() {
        std::size_t j = i_ + 1;
        if (j < s_.size() && s_[j] == '\\') {
            for (j += 2; j < s_.size() && j < i_ + 14 && s_[j] != '\'' && s_[j] != '\n'; ++j) {}
        } else if (j < s_.size()) {
            const auto c = static_cast<unsigned char>(s_[j]);
            j += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        }
        if (j < s_.size() && s_[j] == '\'' && j > i_ + 1) {
            push(Kind::other, s_.substr(i_, j + 1 - i_));
            i_ = j + 1;
        } else {
            punct();
        }
    }

    void punct() {
        const std::string_view two = s_.substr(i_, 2);
        const std::size_t len = (two == "::" || two == "->") ? 2 : 1;
        push(Kind::punct, s_.substr(i_, len));
        i_ += len;
    }

    // "..." (and '...', `...`, """...""" where the language has them), decoding escapes.
    void quoted(char quote, bool multiline) {
        Token t;
        t.kind = Kind::str;
        t.line = line_;
        const bool triple = multiline && quote != '`';
        i_ += triple ? 3 : 1;
        const bool go = lang_ == Language::go;
        for (;;) {
            if (i_ >= s_.size()) {
                t.problem = "unterminated string literal";
                break;
            }
            const char c = s_[i_];
            if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
                i_ += triple ? 3 : 1;
                break;
            }
            if (c == '\n') {
                if (!multiline) {
                    t.problem = "unterminated string literal";
                    break;
                }
                ++line_;
            }
            if (c != '\\') {
                t.value += c;
                ++i_;
                continue;
            }
            escape(t, go);
        }
        if (lang_ == Language::cpp) udlSuffix(t);
        if (quote == '`' && t.value.find("${") != std::string::npos && t.problem.empty())
            t.problem = "a template literal with ${...} is not a constant";
        tokens_.push_back(std::move(t));
    }

    // One escape at s_[i_] == '\\'. Go's are strict (\ooo three digits, \xHH two); C++'s \x takes
    // every hex digit that follows, as the standard says.
    void escape(Token& t, bool go) {
        const char e = peek(1);
        i_ += 2;
        auto fail = [&](std::string why) {
            if (t.problem.empty()) t.problem = std::move(why);
        };
        switch (e) {
            case 'n': t.value += '\n'; return;
            case 't': t.value += '\t'; return;
            case 'r': t.value += '\r'; return;
            case 'a': t.value += '\a'; return;
            case 'b': t.value += '\b'; return;
            case 'f': t.value += '\f'; return;
            case 'v': t.value += '\v'; return;
            case '\\': t.value += '\\'; return;
            case '"': t.value += '"'; return;
            case '\'': t.value += '\''; return;
            case '?':
                if (go) break;
                t.value += '?';
                return;
            case '\n':  // a line splice (C++): the backslash-newline vanishes
                if (go) break;
                ++line_;
                return;
            case '\r':
                // Backslash-CRLF is a splice like backslash-newline. A lone CR is no line end
                // here (run() counts lines at '\n' only), so it splices nothing and must not
                // count a line: that shifted every later name's line by one.
                if (go || peek(0) != '\n') break;
                ++i_;
                ++line_;
                return;
            case 'x': {
                std::uint32_t v = 0;
                int digits = 0;
                const int most = (go || lang_ != Language::cpp) ? 2 : 64;
                while (digits < most && hexValue(static_cast<unsigned char>(peek(0))) >= 0) {
                    v = std::min<std::uint32_t>(v * 16 + static_cast<std::uint32_t>(hexValue(static_cast<unsigned char>(peek(0)))), 0x1000);
                    ++i_;
                    ++digits;
                }
                if (digits == 0 || (most == 2 && digits != 2)) return fail("\\x needs hex digits");
                if (v > 0xFF) return fail("\\x escape above 0xff");
                t.value += static_cast<char>(v);
                return;
            }
            case 'u':
            case 'U': {
                const int want = e == 'u' ? 4 : 8;
                std::uint32_t cp = 0;
                for (int k = 0; k < want; ++k) {
                    const int h = hexValue(static_cast<unsigned char>(peek(0)));
                    if (h < 0) return fail(std::string("\\") + e + " needs " + std::to_string(want) + " hex digits");
                    cp = cp * 16 + static_cast<std::uint32_t>(h);
                    ++i_;
                }
                if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return fail("\\u escape is not a Unicode scalar value");
                appendUtf8(t.value, cp);
                return;
            }
            default:
                if (e >= '0' && e <= '7') {
                    std::uint32_t v = static_cast<std::uint32_t>(e - '0');
                    int digits = 1;
                    while (digits < 3 && peek(0) >= '0' && peek(0) <= '7') {
                        v = v * 8 + static_cast<std::uint32_t>(peek(0) - '0');
                        ++i_;
                        ++digits;
                    }
                    if (go && digits != 3) return fail("Go octal escapes take three digits");
                    if (v > 0xFF) return fail("octal escape above 0377");
                    t.value += static_cast<char>(v);
                    return;
                }
                break;
        }
        if (e == '\0' && i_ > s_.size()) {
            i_ = s_.size();
            return fail("unterminated string literal");
        }
        fail(std::string("unknown escape \\") + e);
        if (e == '\n') ++line_;
    }

    // "name"s and "name"sv are still constants; any other user-defined literal is not ours to guess.
    void udlSuffix(Token& t) {
        if (i_ >= s_.size() || !isIdentStart(static_cast<unsigned char>(s_[i_]))) return;
        const std::size_t start = i_;
        while (i_ < s_.size() && isIdentChar(static_cast<unsigned char>(s_[i_]))) ++i_;
        const std::string_view suffix = s_.substr(start, i_ - start);
        if (suffix != "s" && suffix != "sv" && t.problem.empty())
            t.problem = "user-defined literal suffix " + std::string(suffix);
    }

    // Go `...`: no escapes; carriage returns are dropped, as the Go spec says.
    void goRaw() {
        Token t;
        t.kind = Kind::str;
        t.line = line_;
        ++i_;
        while (i_ < s_.size() && s_[i_] != '`') {
            if (s_[i_] == '\n') ++line_;
            if (s_[i_] != '\r') t.value += s_[i_];
            ++i_;
        }
        if (i_ >= s_.size()) t.problem = "unterminated raw string literal";
        else ++i_;
        tokens_.push_back(std::move(t));
    }

    // C++ R"delim( ... )delim"; i_ is at the opening quote.
    void cppRaw() {
        Token t;
        t.kind = Kind::str;
        t.line = line_;
        const std::size_t open = s_.find('(', i_ + 1);
        const std::size_t delimLen = open == std::string_view::npos ? 0 : open - (i_ + 1);
        const std::string_view delim = s_.substr(i_ + 1, delimLen);
        if (open == std::string_view::npos || delimLen > 16 ||
            delim.find_first_of(" \t\n\\)\"") != std::string_view::npos) {
            t.problem = "malformed raw string literal";
            ++i_;
            tokens_.push_back(std::move(t));
            return;
        }
        const std::string close = ")" + std::string(delim) + "\"";
        const std::size_t end = s_.find(close, open + 1);
        const std::size_t stop = end == std::string_view::npos ? s_.size() : end;
        t.value = std::string(s_.substr(open + 1, stop - open - 1));
        line_ += static_cast<int>(std::count(t.value.begin(), t.value.end(), '\n'));
        if (end == std::string_view::npos) {
            t.problem = "unterminated raw string literal";
            i_ = s_.size();
        } else {
            i_ = end + close.size();
        }
        udlSuffix(t);
        tokens_.push_back(std::move(t));
    }

    void push(Kind kind, std::string_view text) {
        Token t;
        t.kind = kind;
        t.text = text;
        t.line = line_;
        tokens_.push_back(std::move(t));
    }

    std::string_view s_;
    Language lang_;
    std::size_t i_ = 0;
    int line_ = 1;
    std::vector<Token> tokens_;
};

// ---------------------------------------------------------------------------------------------
// Call shapes over the token stream.

class Matcher {
public:
    Matcher(const std::vector<Token>& tokens, TextScan& out) : t_(tokens), out_(out) {}

    void run(Language lang) {
        // Go files get the Go shapes, C/C++ files the C++ ones, wrappers in other languages both.
        const bool go = lang != Language::cpp;
        const bool cpp = lang != Language::go;
        for (std::size_t k = 0; k < t_.size(); ++k) {
            if (go) goCalls(k);
            if (cpp) cppCalls(k);
        }
    }

private:
    bool ident(std::size_t k, std::string_view text) const {
        return k < t_.size() && t_[k].kind == Kind::ident && t_[k].text == text;
    }
    bool punct(std::size_t k, std::string_view text) const {
        return k < t_.size() && t_[k].kind == Kind::punct && t_[k].text == text;
    }
    bool member(std::size_t k) const {  // is token k reached through ., -> or :: ?
        return k > 0 && (punct(k - 1, ".") || punct(k - 1, "->") || punct(k - 1, "::"));
    }

    // From the first token of an argument, skips `count` arguments; the index of the next one, or
    // nullopt when the list closes first.
    std::optional<std::size_t> skipArgs(std::size_t k, int count) const {
        int depth = 0;
        for (; k < t_.size() && count > 0; ++k) {
            if (t_[k].kind != Kind::punct) continue;
            const std::string_view p = t_[k].text;
            if (p == "(" || p == "[" || p == "{") {
                ++depth;
            } else if (p == ")" || p == "]" || p == "}") {
                if (depth-- == 0) return std::nullopt;
            } else if (p == "," && depth == 0) {
                --count;
            }
        }
        if (count > 0 || k >= t_.size()) return std::nullopt;
        return k;
    }

    // The constant string starting at token k: a literal, more literals right after it (C++
    // concatenation) or after '+' (Go), ending the argument. nullopt when it is not constant.
    struct Constant {
        std::string value;
        std::string problem;
        int line = 0;
    };
    std::optional<Constant> constantAt(std::size_t k) const {
        if (k >= t_.size() || t_[k].kind != Kind::str) return std::nullopt;
        Constant c{t_[k].value, t_[k].problem, t_[k].line};
        for (++k; k < t_.size();) {
            const std::size_t next = punct(k, "+") ? k + 1 : k;
            if (next >= t_.size() || t_[next].kind != Kind::str) break;
            c.value += t_[next].value;
            if (c.problem.empty()) c.problem = t_[next].problem;
            k = next + 1;
        }
        if (!(punct(k, ",") || punct(k, ")") || punct(k, "}"))) return std::nullopt;
        return c;
    }

    // The name argument at k. `warn`: say so when it is not a constant (only for call shapes that
    // are surely this library; an unrelated class called Lock must not flood the warnings).
    void takeName(std::optional<std::size_t> k, bool warn) {
        if (!k) return;
        const std::optional<Constant> c = constantAt(*k);
        if (!c) {
            if (warn) out_.problems.push_back({"the lock name is not a constant string; add it by hand", t_[*k].line});
            return;
        }
        if (!c->problem.empty()) {
            out_.problems.push_back({"lock name literal skipped: " + c->problem, c->line});
        } else if (c->value.empty()) {
            out_.problems.push_back({"empty lock name (the library rejects it)", c->line});
        } else {
            out_.names.push_back({c->value, c->line});
        }
    }

    void goCalls(std::size_t k) {
        if (ident(k, "lock") && !member(k) && punct(k + 1, ".") && punct(k + 3, "(")) {
            if (ident(k + 2, "New")) takeName(skipArgs(k + 4, 1), true);
            else if (ident(k + 2, "RunOnce") || ident(k + 2, "RunBlocking")) takeName(skipArgs(k + 4, 2), true);
        } else if (ident(k, "service") && !member(k) && punct(k + 1, ".") && ident(k + 2, "WithSingletonCron") &&
                   punct(k + 3, "(")) {
            // The first string argument that is not a cron spec ("0 3 * * *", "@daily").
            for (std::optional<std::size_t> a = k + 4; a; a = skipArgs(*a, 1)) {
                const std::optional<Constant> c = constantAt(*a);
                if (c && c->problem.empty() && !c->value.empty() && c->value.front() != '@' &&
                    c->value.find_first_of(" \t") == std::string::npos) {
                    out_.names.push_back({c->value, c->line});
                    return;
                }
            }
        }
    }

    void cppCalls(std::size_t k) {
        std::size_t x = k;  // the Lock / run_once token
        bool qualified = false;
        if (ident(k, "pglock") && !member(k) && punct(k + 1, "::")) {
            x = k + 2;
            qualified = true;
        } else if (member(k)) {
            return;  // other::Lock, lk.run_once, p->run_once: not ours (pglock::X is handled at "pglock")
        }
        if (ident(x, "Lock")) {
            if (punct(x + 1, "(") || punct(x + 1, "{")) {
                takeName(skipArgs(x + 2, 1), qualified);  // pglock::Lock(pool, "name") temporary
            } else if (x + 1 < t_.size() && t_[x + 1].kind == Kind::ident &&
                       (punct(x + 2, "(") || punct(x + 2, "{"))) {
                // pglock::Lock lk(pool, "name"): never warned about, since a function returning
                // pglock::Lock has exactly this shape.
                takeName(skipArgs(x + 3, 1), false);
            } else if (punct(x + 1, ">") && punct(x + 2, "(")) {
                takeName(skipArgs(x + 3, 1), qualified);  // make_unique<pglock::Lock>(pool, "name")
            }
        } else if ((ident(x, "run_once") || ident(x, "run_blocking")) && punct(x + 1, "(")) {
            takeName(skipArgs(x + 2, 1), qualified);
        }
    }

    const std::vector<Token>& t_;
    TextScan& out_;
};

bool skippedDirectory(const QString& name) {
    static const std::array<QString, 6> skipped = {
        QStringLiteral(".git"),  QStringLiteral(".hg"),          QStringLiteral(".svn"),
        QStringLiteral("build"), QStringLiteral("node_modules"), QStringLiteral("vendor")};
    return std::find(skipped.begin(), skipped.end(), name) != skipped.end();
}

}  // namespace

std::optional<Language> languageOf(const QString& fileName) {
    const QString ext = QFileInfo(fileName).suffix().toLower();
    if (ext == u"go") return Language::go;
    if (ext == u"cpp" || ext == u"cc" || ext == u"cxx" || ext == u"hpp" || ext == u"h" || ext == u"c")
        return Language::cpp;
    if (ext == u"rs" || ext == u"java" || ext == u"kt" || ext == u"cs") return Language::c_like;
    if (ext == u"ts" || ext == u"js") return Language::js;
    if (ext == u"py" || ext == u"rb") return Language::hash;
    return std::nullopt;
}

TextScan scanText(std::string_view text, Language language) {
    const std::vector<Token> tokens = Lexer(text, language).run();
    TextScan out;
    Matcher(tokens, out).run(language);
    return out;
}

TreeScan scanTree(const QString& root) {
    TreeScan scan;
    const QFileInfo rootInfo(root);
    if (!rootInfo.exists()) {
        scan.error = QStringLiteral("%1: no such directory").arg(root);
        return scan;
    }
    if (!rootInfo.isDir()) {
        scan.error = QStringLiteral("%1: not a directory").arg(root);
        return scan;
    }
    if (!rootInfo.isReadable() || !rootInfo.isExecutable()) {
        scan.error = QStringLiteral("%1: the directory cannot be read").arg(root);
        return scan;
    }
    const QDir rootDir(rootInfo.absoluteFilePath());

    // Depth first in name order, for a stable report. QDirIterator without Subdirectories per
    // level, so that skipped directories are pruned instead of walked and filtered.
    std::vector<QString> pending{rootDir.absolutePath()};
    while (!pending.empty()) {
        const QString dir = pending.back();
        pending.pop_back();
        QList<QFileInfo> entries;
        QDirIterator it(dir, QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System);
        while (it.hasNext()) {
            it.next();
            entries.append(it.fileInfo());
        }
        std::sort(entries.begin(), entries.end(),
                  [](const QFileInfo& a, const QFileInfo& b) { return a.fileName() < b.fileName(); });
        std::vector<QString> subdirs;
        for (const QFileInfo& entry : entries) {
            if (entry.isSymLink()) continue;
            const QString rel = rootDir.relativeFilePath(entry.absoluteFilePath());
            if (entry.isDir()) {
                if (skippedDirectory(entry.fileName())) continue;
                if (!entry.isReadable() || !entry.isExecutable()) {
                    ++scan.skipped;
                    scan.warnings << QStringLiteral("%1/: the directory cannot be read; skipped").arg(rel);
                    continue;
                }
                subdirs.push_back(entry.absoluteFilePath());
                continue;
            }
            if (!entry.isFile()) continue;
            const std::optional<Language> lang = languageOf(entry.fileName());
            if (!lang) continue;
            if (entry.size() > kMaxSourceFileBytes) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1: larger than 2 MiB; skipped").arg(rel);
                continue;
            }
            QFile file(entry.absoluteFilePath());
            if (!file.open(QIODevice::ReadOnly)) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1: cannot be read (%2); skipped").arg(rel, file.errorString());
                continue;
            }
            const QByteArray data = file.read(kMaxSourceFileBytes + 1);
            if (data.size() > kMaxSourceFileBytes) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1: larger than 2 MiB; skipped").arg(rel);
                continue;
            }
            if (QByteArrayView(data).first(std::min<qsizetype>(data.size(), kBinarySniffBytes)).contains('\0')) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1: a binary file; skipped").arg(rel);
                continue;
            }
            ++scan.filesScanned;
            const TextScan found = scanText(std::string_view(data.constData(), static_cast<std::size_t>(data.size())), *lang);
            for (const Literal& name : found.names)
                scan.names.append(NameSource{QByteArray(name.name.data(), static_cast<qsizetype>(name.name.size())), rel,
                                             name.line});
            for (const Literal& problem : found.problems) {
                ++scan.skipped;
                scan.warnings << QStringLiteral("%1:%2: %3").arg(rel).arg(problem.line).arg(QString::fromStdString(problem.name));
            }
        }
        for (auto s = subdirs.rbegin(); s != subdirs.rend(); ++s) pending.push_back(*s);
    }
    return scan;
}

}  // namespace lockscope::scan
