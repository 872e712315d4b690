#include "pglock/resolve.hpp"

#include <charconv>
#include <cstddef>
#include <system_error>
#include <vector>

#include "pglock/key.hpp"

namespace pglock {
namespace {

// Why a text is not a key. Everything but `not_a_number` and `empty` still means "the operator
// was typing a key", which is what looks_like_key() reports.
enum class Fail { none, empty, not_a_number, out_of_range, incomplete, bad_pair, bad_digit };

struct Parsed {
    Fail fail = Fail::none;
    std::int64_t key = 0;
    KeyInputForm form = KeyInputForm::none;
    std::string error;
};

Parsed failed(Fail fail, KeyInputForm form, std::string error) {
    return {fail, 0, form, std::move(error)};
}

constexpr bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
constexpr char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// How many bytes the character at s[i] takes: a UTF-8 lead byte with its continuation bytes,
// else 1 (an invalid byte is a character of its own).
std::size_t char_length(std::string_view s, std::size_t i) noexcept {
    const auto lead = static_cast<unsigned char>(s[i]);
    const std::size_t n = lead >= 0xf0 && lead < 0xf8 ? 4 : lead >= 0xe0 && lead < 0xf0 ? 3 : lead >= 0xc0 && lead < 0xe0 ? 2 : 1;
    if (i + n > s.size()) return 1;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 1;
    return n;
}

constexpr bool is_control(char c) noexcept { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

// The character at s[i] for a message: 'z', or "a control character" (never the byte itself).
std::string quoted_character(std::string_view s, std::size_t i) {
    if (is_control(s[i])) return "a control character";
    return "'" + std::string(s.substr(i, char_length(s, i))) + "'";
}

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

bool all_digits(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (char c : s)
        if (!is_digit(c)) return false;
    return true;
}

// [+-]?[0-9]+ — the shape of a decimal number, regardless of its range.
bool numeric_shape(std::string_view s) noexcept {
    if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
    return all_digits(s);
}

constexpr std::string_view kNotANumber =
    "not a number (expected a decimal or 0x hex bigint key, or a classid/objid pair)";

Parsed parse_decimal(std::string_view s) {
    // from_chars takes a leading '-' but not '+'; an explicit '+' is harmless, so allow it.
    if (s.front() == '+') s.remove_prefix(1);
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec == std::errc::result_out_of_range)
        return failed(Fail::out_of_range, KeyInputForm::decimal,
                      "out of range for a bigint key (-9223372036854775808..9223372036854775807)");
    if (ec != std::errc{} || ptr != s.data() + s.size())
        return failed(Fail::not_a_number, KeyInputForm::none, std::string(kNotANumber));
    return {Fail::none, value, KeyInputForm::decimal, {}};
}

// 0x… is the key's 64-bit pattern (how a hex dump or a Go %x shows it); -0x… negates a magnitude.
Parsed parse_hex(std::string_view s) {
    bool negative = false;
    if (s.front() == '+' || s.front() == '-') {
        negative = s.front() == '-';
        s.remove_prefix(1);
    }
    s.remove_prefix(2);  // "0x" / "0X", checked by the caller
    if (s.empty()) return failed(Fail::incomplete, KeyInputForm::hex, "0x needs hex digits after it");
    std::uint64_t bits = 0;
    int significant = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const int v = hex_value(s[i]);
        // "0x" says the operator meant a number: a bad digit is a key error, not a name.
        if (v < 0)
            return failed(Fail::bad_digit, KeyInputForm::hex, quoted_character(s, i) + " is not a hex digit (0x takes 0-9, a-f)");
        if (significant > 0 || v != 0) ++significant;  // leading zeros do not count
        bits = (bits << 4) | static_cast<std::uint64_t>(v);
    }
    if (significant > 16)
        return failed(Fail::out_of_range, KeyInputForm::hex,
                      "out of range for a bigint key: 0x takes at most 16 hex digits");
    if (negative) {
        if (bits > (std::uint64_t{1} << 63))
            return failed(Fail::out_of_range, KeyInputForm::hex,
                          "out of range for a bigint key: -0x… goes down to -0x8000000000000000");
        bits = std::uint64_t{0} - bits;  // two's complement of the magnitude; 2^63 becomes INT64_MIN
    }
    return {Fail::none, static_cast<std::int64_t>(bits), KeyInputForm::hex, {}};
}

// One half of a pair: an oid, 0..4294967295, written in decimal.
Parsed parse_oid(std::string_view s, std::string_view what) {
    const std::string range = std::string(what) + " out of range: it is an oid, 0..4294967295";
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    if (!s.empty() && s.front() == '-' && all_digits(s.substr(1)))
        return failed(Fail::out_of_range, KeyInputForm::pair, range);
    if (!all_digits(s))
        return failed(Fail::bad_pair, KeyInputForm::pair, std::string(what) + " is not a number");
    std::uint32_t value = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec == std::errc::result_out_of_range) return failed(Fail::out_of_range, KeyInputForm::pair, range);
    if (ec != std::errc{} || ptr != s.data() + s.size())
        return failed(Fail::bad_pair, KeyInputForm::pair, std::string(what) + " is not a number");
    return {Fail::none, value, KeyInputForm::pair, {}};
}

// objsubid 1 is a bigint key's pair, 2 the int4-pair form (same tag, another lock).
Parsed combine(std::string_view classid, std::string_view objid, bool int4_pair = false) {
    Parsed hi = parse_oid(classid, "classid");
    if (hi.fail != Fail::none) return hi;
    Parsed lo = parse_oid(objid, "objid");
    if (lo.fail != Fail::none) return lo;
    const LockTag tag{static_cast<std::uint32_t>(hi.key), static_cast<std::uint32_t>(lo.key)};
    return {Fail::none, key_of(tag), int4_pair ? KeyInputForm::int4_pair : KeyInputForm::pair, {}};
}

// One int4 key of the int4-pair form: a signed 32-bit decimal.
Parsed parse_int4(std::string_view s) {
    if (!numeric_shape(s)) return failed(Fail::not_a_number, KeyInputForm::none, std::string(kNotANumber));
    std::string_view digits = s;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    std::int32_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range)
        return failed(Fail::out_of_range, KeyInputForm::int4_pair, "an int4 key is -2147483648..2147483647");
    if (digits.empty() || ec != std::errc{} || ptr != digits.data() + digits.size())
        return failed(Fail::bad_pair, KeyInputForm::int4_pair, "an int4 pair needs two int4 numbers");
    return {Fail::none, value, KeyInputForm::int4_pair, {}};
}

constexpr std::string_view kInt4PairSuffix = "int4 pair";

// The text without a trailing "int4 pair" (any case), or nullopt when it has none.
std::optional<std::string_view> strip_int4_suffix(std::string_view s) noexcept {
    if (s.size() < kInt4PairSuffix.size()) return std::nullopt;
    const std::string_view tail = s.substr(s.size() - kInt4PairSuffix.size());
    for (std::size_t i = 0; i < tail.size(); ++i)
        if (lower(tail[i]) != kInt4PairSuffix[i]) return std::nullopt;
    return trim(s.substr(0, s.size() - kInt4PairSuffix.size()));
}

// "(1, 2) int4 pair", "(-1,2) INT4 PAIR", "1, 2 int4 pair".
Parsed parse_int4_pair(std::string_view s) {
    if (!s.empty() && s.front() == '(') {
        if (s.back() != ')') return failed(Fail::incomplete, KeyInputForm::int4_pair, "an int4 pair opened with ( needs a closing )");
        s = trim(s.substr(1, s.size() - 2));
    }
    const std::size_t comma = s.find(',');
    if (comma == std::string_view::npos) {
        if (!numeric_shape(s)) return failed(Fail::not_a_number, KeyInputForm::none, std::string(kNotANumber));
        return failed(Fail::incomplete, KeyInputForm::int4_pair, "an int4 pair needs two int4 numbers");
    }
    Parsed first = parse_int4(trim(s.substr(0, comma)));
    if (first.fail != Fail::none) return first;
    Parsed second = parse_int4(trim(s.substr(comma + 1)));
    if (second.fail != Fail::none) return second;
    const LockTag tag{static_cast<std::uint32_t>(static_cast<std::int32_t>(first.key)),
                      static_cast<std::uint32_t>(static_cast<std::int32_t>(second.key))};
    return {Fail::none, key_of(tag), KeyInputForm::int4_pair, {}};
}

constexpr std::string_view kHalfPair = "a classid/objid pair needs two numbers";

// "classid=1 objid=2", "objid=2, classid=1", "CLASSID = 1 OBJID = 2", and as the locks view's
// tooltip writes it: "classid 1, objid 2, objsubid 1" (objsubid 2: the int4-pair form).
Parsed parse_labelled(std::string_view s) {
    std::optional<std::string_view> classid, objid, objsubid;
    std::size_t i = 0;
    auto skip = [&](bool commas) {
        while (i < s.size() && (is_space(s[i]) || (commas && s[i] == ','))) ++i;
    };
    for (skip(true); i < s.size(); skip(true)) {
        std::string label;
        while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) label += lower(s[i++]);
        skip(false);
        if (i >= s.size() || (label != "classid" && label != "objid" && label != "objsubid"))
            return failed(Fail::bad_pair, KeyInputForm::pair, "expected classid=NUMBER objid=NUMBER");
        if (s[i] == '=' || s[i] == ':') ++i;
        skip(false);
        const std::size_t start = i;
        while (i < s.size() && !is_space(s[i]) && s[i] != ',') ++i;
        auto& slot = label == "classid" ? classid : label == "objid" ? objid : objsubid;
        if (slot) return failed(Fail::bad_pair, KeyInputForm::pair, label + " is given twice");
        slot = s.substr(start, i - start);
    }
    if (!classid || !objid || classid->empty() || objid->empty())
        return failed(Fail::incomplete, KeyInputForm::pair, std::string(kHalfPair));
    if (objsubid && *objsubid != "1" && *objsubid != "2")
        return failed(Fail::bad_pair, KeyInputForm::pair, "objsubid is 1 (a bigint key) or 2 (an int4 pair)");
    return combine(*classid, *objid, objsubid && *objsubid == "2");
}

// "1/2", "1,2", "(1, 2)". Parts that are not numbers make the whole text a name ("jobs/nightly").
Parsed parse_pair(std::string_view s) {
    bool open_paren = false, close_paren = false;
    if (s.front() == '(') {
        open_paren = true;
        s.remove_prefix(1);
        if (!s.empty() && s.back() == ')') {
            close_paren = true;
            s.remove_suffix(1);
        }
    }
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
        if (i == s.size() || s[i] == '/' || s[i] == ',') {
            parts.push_back(trim(s.substr(start, i - start)));
            start = i + 1;
        }
    }
    for (std::string_view part : parts)
        if (!part.empty() && !numeric_shape(part))
            return failed(Fail::not_a_number, KeyInputForm::none, std::string(kNotANumber));
    if (parts.size() == 1) {
        // No separator: "(123)" is half a pair; anything else never reaches here as numeric.
        if (open_paren && !parts[0].empty()) return failed(Fail::incomplete, KeyInputForm::pair, std::string(kHalfPair));
        return failed(Fail::not_a_number, KeyInputForm::none, std::string(kNotANumber));
    }
    if (parts.size() > 2)
        return failed(Fail::bad_pair, KeyInputForm::pair, "a classid/objid pair needs exactly two numbers");
    if (parts[0].empty() || parts[1].empty())
        return failed(Fail::incomplete, KeyInputForm::pair, std::string(kHalfPair));
    if (open_paren && !close_paren)
        return failed(Fail::incomplete, KeyInputForm::pair, "a classid/objid pair opened with ( needs a closing )");
    return combine(parts[0], parts[1]);
}

// Digits with exactly one stray character ("12a", "123!", "12 34", "-71326x52"): a mistyped key,
// not a name. The offset of the stray, or nullopt. The text must start with a digit (after a
// sign), so that "v2" stays a name, and more than one stray makes it a name ("12abc",
// "2024-01-01"). Control characters never count as a stray: text with one is never key-shaped.
std::optional<std::size_t> stray_in_number(std::string_view s) noexcept {
    std::size_t i = (s.front() == '+' || s.front() == '-') ? 1 : 0;
    if (i >= s.size() || !is_digit(s[i])) return std::nullopt;
    std::optional<std::size_t> stray;
    while (i < s.size()) {
        if (is_digit(s[i])) {
            ++i;
            continue;
        }
        if (stray || is_control(s[i])) return std::nullopt;
        stray = i;
        i += char_length(s, i);
    }
    return stray;
}

bool starts_with_label(std::string_view s) noexcept {
    for (std::string_view label : {std::string_view("classid"), std::string_view("objid")}) {
        if (s.size() < label.size()) continue;
        bool same = true;
        for (std::size_t i = 0; i < label.size(); ++i) same = same && lower(s[i]) == label[i];
        if (!same) continue;
        std::string_view rest = trim(s.substr(label.size()));
        if (!rest.empty() && (rest.front() == '=' || rest.front() == ':' || is_digit(rest.front()) || rest.front() == '+'))
            return true;
    }
    return false;
}

// A copy of the locks view's Key tooltip: "pg_locks: classid 1, objid 2, objsubid 1".
std::string_view strip_pg_locks_prefix(std::string_view s) noexcept {
    constexpr std::string_view prefix = "pg_locks:";
    if (s.size() < prefix.size()) return s;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (lower(s[i]) != prefix[i]) return s;
    return trim(s.substr(prefix.size()));
}

Parsed parse(std::string_view text) {
    std::string_view s = trim(text);
    if (s.empty()) return failed(Fail::empty, KeyInputForm::none, "empty input");
    if (const auto pair = strip_int4_suffix(s)) return parse_int4_pair(*pair);
    s = strip_pg_locks_prefix(s);
    const std::string_view unsigned_part = (s.front() == '+' || s.front() == '-') ? s.substr(1) : s;
    if (unsigned_part.size() >= 2 && unsigned_part[0] == '0' && lower(unsigned_part[1]) == 'x') return parse_hex(s);
    if (numeric_shape(s)) return parse_decimal(s);
    if (starts_with_label(s)) return parse_labelled(s);
    Parsed pair = parse_pair(s);
    if (pair.fail == Fail::not_a_number) {
        if (const auto stray = stray_in_number(s)) {
            return failed(Fail::bad_digit, KeyInputForm::decimal,
                          quoted_character(s, *stray) + " in a number (a key is written in digits only)");
        }
    }
    return pair;
}

}  // namespace

std::string int4_pair_text(std::int32_t first, std::int32_t second) {
    return "(" + std::to_string(first) + ", " + std::to_string(second) + ") " + std::string(kInt4PairSuffix);
}

KeyInput parse_key_input(std::string_view text) {
    Parsed p = parse(text);
    if (p.fail == Fail::none) return {p.key, {}, p.form};
    return {std::nullopt, std::move(p.error), p.form};
}

bool looks_like_key(std::string_view text) noexcept {
    try {
        const Fail fail = parse(text).fail;
        return fail != Fail::empty && fail != Fail::not_a_number;
    } catch (...) {  // only std::bad_alloc from building a message; then nothing is key-shaped
        return false;
    }
}

}  // namespace pglock
