#!/usr/bin/env python3
"""Expected keys of every key scheme, computed here with Python's hashlib, zlib and hmac, never
by the C++ under test. test_key_schemes runs this and compares.

Each line: scheme, name, database, schema, table, app, prefix, form, v1, v2 (tab-separated).
A text field is "-" when absent, else "=" and its bytes in hex (so empty and absent differ).
form is "bigint" (v1 is the key, v2 "-") or "pair" (v1, v2 = the two int4 arguments).
Each formula is written from the library's source (docs/key-schemes.md cites the files)."""
import hashlib
import hmac
import struct
import sys
import zlib

assert sys.byteorder == "little", "PALs' struct.unpack('q') is native-endian; these vectors assume little"


def s64(b, order):
    return int.from_bytes(b, order, signed=True)


def pglock_v1(name, ctx):
    return ("bigint", s64(hashlib.sha256(name).digest()[:8], "big"))


def golang_migrate(name, ctx):
    # database/util.go: strings.Join(append(additionalNames, databaseName), "\x00"), the
    # additional names being the schema and the table (database/postgres/postgres.go Lock()).
    buf = b"\0".join([ctx["schema"], ctx.get("table", b"schema_migrations"), ctx["database"]])
    return ("bigint", (zlib.crc32(buf) * 1486364155) % 2**32)


def rails_migration(name, ctx):
    return ("bigint", 2053462845 * zlib.crc32(ctx["database"]))


def sqlx_migrate(name, ctx):
    return ("bigint", 0x3D32AD9E * zlib.crc32(ctx["database"]))


def with_advisory_lock(name, ctx):
    prefix = int(ctx["prefix"]) if "prefix" in ctx else 0  # nil.to_i == 0
    return ("pair", zlib.crc32(name) & 0x7FFFFFFF, prefix & 0x7FFFFFFF)


def django_pglocks(name, ctx):
    # django_pglocks/__init__.py 1.0.3, as written there.
    pos = zlib.crc32(name)
    lock_id = (2**31 - 1) & pos
    if pos & 2**31:
        lock_id -= 2**31
    return ("bigint", lock_id)


def distributedlock_net(name, ctx):
    # PostgresAdvisoryLockKey(string, allowHashing: true) works on a .NET string (UTF-16).
    text = name.decode("utf-8")
    length = len(text.encode("utf-16-le")) // 2
    if length <= 9 and all(ord(ch) <= 127 for ch in text):
        result = 0
        for ch in text:
            result = (result << 7) | ord(ch)
        result <<= 1
        for _ in range(length, 9):
            result = (result << 7) | 127
        result = s64(result.to_bytes(8, "big"), "big")
        return ("pair", result >> 32, s64((result & 0xFFFFFFFF).to_bytes(4, "big"), "big"))

    def hex8(part):
        return len(part) == 8 and all(ch in "0123456789abcdefABCDEF" for ch in part)

    def i32(part):
        return s64(int(part, 16).to_bytes(4, "big"), "big")

    if length == 16 and hex8(text[:8]) and hex8(text[8:]):
        return ("bigint", (i32(text[:8]) << 32) | (int(text[8:], 16)))
    if length == 17 and text[8] == "," and hex8(text[:8]) and hex8(text[9:]):
        return ("pair", i32(text[:8]), i32(text[9:]))
    return ("bigint", s64(hashlib.sha1(text.encode("utf-8")).digest()[:8], "little"))


def pals(name, ctx):
    full = name if "app" not in ctx else ctx["app"] + b"." + name
    (num,) = struct.unpack("q", hashlib.sha1(full).digest()[:8])
    return ("bigint", num)


def pg_boss(name, ctx):
    data = ctx["database"] + b".pgboss." + ctx.get("schema", b"pgboss") + name
    return ("bigint", s64(hashlib.sha224(data).digest()[:8], "big"))


def good_job(name, ctx):
    return ("bigint", s64(hashlib.md5(ctx["table"] + b"-" + name).digest()[:8], "big"))


def sqlx(name, ctx):
    prk = hmac.new(b"\0" * 32, name, hashlib.sha256).digest()
    t1 = hmac.new(prk, b"SQLx (Rust) Postgres advisory lock" + b"\x01", hashlib.sha256).digest()
    return ("bigint", s64(t1[:8], "little"))


def crc_names(high):
    """Names whose CRC-32 has the top bit set (or clear): the signedness edge."""
    out = []
    i = 0
    while len(out) < 3:
        n = b"crc-%d" % i
        if (zlib.crc32(n) >= 2**31) == high:
            out.append(n)
        i += 1
    return out


NAMES = [
    b"", b"a", b"orders.daily-rollup", b"billing:invoice-run", "größe/ключ/漢字".encode(), b"nul\0inside",
    b"\xff\xfe\x80 not utf-8", b"x" * 10000, bytes(range(1, 128)), b"123456789", b"1234567890", b"\0" * 9,
    b"ffffffffffffffff", b"0123456789abcDEF", b"0000000a,ffffffff", b"1234567g12345678", b"12345678;12345678",
    ("漢" * 18).encode(), "é".encode(), b"my first Postgres advisory lock!",
] + crc_names(True) + crc_names(False)

CONTEXTS = [
    {"database": b"database_name", "schema": b"schema_name_1", "table": b"schema_name_2"},
    {"database": b"app", "schema": b"public"},
    {"database": "приложение".encode(), "schema": b"", "table": b"t", "app": b"billing", "prefix": b"42"},
    {"database": b"crc-0", "schema": b"pgboss", "table": b"good_jobs", "app": b"", "prefix": b"-5"},
    {"database": b"x" * 300, "table": b"good_job_executions", "prefix": b"2147483648"},
]

SCHEMES = {
    "pglock-v1": (pglock_v1, []), "golang-migrate": (golang_migrate, ["database", "schema"]),
    "rails-migration": (rails_migration, ["database"]), "sqlx-migrate": (sqlx_migrate, ["database"]),
    "with_advisory_lock": (with_advisory_lock, []), "django-pglocks": (django_pglocks, []),
    "distributedlock-net": (distributedlock_net, []), "pals": (pals, []), "pg-boss": (pg_boss, ["database"]),
    "good_job": (good_job, ["table"]), "sqlx": (sqlx, []),
}
FIELDS = ["database", "schema", "table", "app", "prefix"]


def field(value):
    return "-" if value is None else "=" + value.hex()


def main():
    for scheme, (fn, needs) in SCHEMES.items():
        for ctx in CONTEXTS:
            if any(k not in ctx for k in needs):
                continue
            for name in NAMES:
                if scheme == "distributedlock-net":
                    try:
                        name.decode("utf-8")
                    except UnicodeDecodeError:
                        continue  # a .NET string is text; there is no such lock name
                if scheme == "pg-boss" and b"\\" in name:
                    continue  # text::bytea reads it as an escape; the registry refuses it
                result = fn(name, ctx)
                v2 = str(result[2]) if result[0] == "pair" else "-"
                cols = [scheme, field(name)] + [field(ctx.get(f)) for f in FIELDS] + [result[0], str(result[1]), v2]
                print("\t".join(cols))


main()
