// What an operator types into a "find this lock" box, turned into an advisory key. The text is
// either a lock *name* (hashed with key_of) or a *key* written one of the ways pg_locks, psql logs
// and this library show it. This header parses the key forms; the caller decides, with
// looks_like_key(), whether text is a key at all. Qt-free, so the CLI can use it as well as the app.
//
// Accepted key forms (surrounding ASCII whitespace is ignored):
//   decimal   -7132652647757890940, 42, +42         a signed int64, range-checked
//   hex       0x9d03ba3510243a84, 0X9D03...          up to 16 significant hex digits, read as the
//                                                    64-bit two's-complement pattern: 0xffffffffffffffff
//                                                    is -1 and 0x9d03ba3510243a84 is -7132652647757890940
//             -0x10                                  a negated magnitude, at most 0x8000000000000000
//   pair      2634267189/270809732                   classid/objid as pg_locks shows them (objsubid=1),
//             2634267189,270809732                   each 0..4294967295; the key is key_of(LockTag)
//             (2634267189, 270809732)
//             classid=2634267189 objid=270809732     (either order; "," or spaces between; any case;
//             classid 2634267189, objid 270809732     "=" or ":" or nothing after a label; an optional
//             pg_locks: classid …, objid …, objsubid 1  "pg_locks:" in front, as the locks view's tooltip)
//   int4 pair (1, 2) int4 pair                        pg_advisory_lock(int4, int4): two signed int4
//             pg_locks: classid 1, objid 2, objsubid 2  keys, as every view shows them (int4_pair_text);
//                                                    objsubid 2 makes a classid/objid pair this form
// The int4-pair form is another lock than any bigint key: KeyInput::form says which, and `key`
// then carries (classid << 32 | objid) only to name the pg_locks tag (see LockEntry::key).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pglock {

// Which form the text had; lets a UI echo "read as classid/objid pair" back to the operator.
enum class KeyInputForm { none, decimal, hex, pair, int4_pair };

// Either a key or a human-readable reason why the text is not one. Exactly one of key/error is
// set. A struct rather than an exception: a half-typed key is the normal state of an input box.
struct KeyInput {
    std::optional<std::int64_t> key;
    std::string error;  // e.g. "out of range for a bigint key"; empty when key is set
    KeyInputForm form = KeyInputForm::none;

    bool ok() const noexcept { return key.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
};

KeyInput parse_key_input(std::string_view text);

// How every view writes a pg_advisory_lock(int4, int4) lock: "(1, 2) int4 pair". The one home of
// this notation; parse_key_input() reads it back.
std::string int4_pair_text(std::int32_t first, std::int32_t second);

// True when the text is *shaped* like a key in one of the forms above, or is an attempt at one —
// even if parse_key_input rejects it for range, because half of a pair is missing, or for a
// character that has no place in a number ("99999999999999999999", "123/", "classid=1", "0xzz",
// "12a", "12 34": a 0x prefix, or digits with one stray character) — so that the UI shows the
// key error instead of silently hashing it as a name. False for empty text and for plain text
// ("orders.daily-rollup", "2024-01-01", "jobs/nightly", "12abc", "v2"): that text is a name.
//
// A name that is itself purely numeric ("12345") looks like a key; key_of("12345") is a different
// key than 12345. The UI must offer a way to force the text as a name (a "name" toggle); this
// function cannot guess, and it never strips quotes or other markers itself.
bool looks_like_key(std::string_view text) noexcept;

}  // namespace pglock
