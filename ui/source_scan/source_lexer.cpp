#include "source_scan/source_lexer.hpp"

#include <algorithm>
#include <cstdint>

namespace lockscope::scan {
namespace {

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

}  // namespace

std::vector<Token> lexSource(std::string_view text, Language language) { return Lexer(text, language).run(); }

}  // namespace lockscope::scan
