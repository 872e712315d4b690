// Holder identity: while a lock is held through the library, the holding session's
// application_name names it (set in the statement that takes the lock, restored in the one that
// releases it), and the monitor reads the name back for keys no catalog knows.
#include <libpq-fe.h>

#include <QtTest>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core_test_util.hpp"
#include "pglock/text.hpp"

using namespace std::chrono_literals;
using pglock::Lock;
using pglock::Mode;
using pgt::guarded;
using pgt::qba;
using pgt::RawConn;
using pgt::wait_until;
namespace hi = pglock::holder_identity;

namespace {

constexpr const char* kApp = "billing-worker";

pglock::PoolOptions pool_options(std::size_t max_size = 4) {
    pglock::PoolOptions o;
    o.max_size = max_size;
    o.overrides = {{"application_name", kApp}};
    return o;
}

// A name of `bytes` bytes of two-byte Cyrillic letters, with an ASCII head (a UTF-8 name whose
// escaped form is far longer than 63 bytes).
std::string cyrillic_name(const std::string& head, int letters) {
    std::string name = head;
    for (int i = 0; i < letters; ++i) name += (i % 2) ? "\xd1\x87" : "\xd1\x91";  // "ч", "ё"
    return name;
}

// A unique name short enough to be shown whole beside kApp (unique_name() is ~60 bytes).
std::string short_name(const char* tag) {
    return std::string(tag) + "." + QUuid::createUuid().toString(QUuid::Id128).left(10).toStdString();
}

bool valid_utf8(const std::string& s) { return pglock::is_valid_utf8(s); }

}  // namespace

class TestHolderIdentity : public QObject {
    Q_OBJECT

    std::string dsn_;
    std::unique_ptr<RawConn> obs_;

    std::string app_of(int pid) {
        return obs_->scalar("SELECT coalesce((SELECT application_name FROM pg_stat_activity WHERE pid = $1::int), '<gone>')",
                            {std::to_string(pid)});
    }
    // What a fresh session of the pool shows: proves nothing of ours stayed on pooled sessions.
    std::string pooled_app(pglock::Pool& pool) {
        auto s = pool.acquire();
        return app_of(s->backend_pid());
    }
    pglock::monitor::Snapshot poll() {
        auto mon = pglock::Session::connect(dsn_);
        return pglock::monitor::poll(mon);
    }
    static const pglock::monitor::LockEntry* find(const pglock::monitor::Snapshot& s, std::int64_t key) {
        for (const auto& e : s.locks)
            if (e.form == pglock::monitor::KeyForm::bigint && e.key == key) return &e;
        return nullptr;
    }

private slots:
    void initTestCase() {
        PGT_REQUIRE_DSN(dsn_);
        guarded([&] { obs_ = std::make_unique<RawConn>(dsn_); });
    }
    void cleanupTestCase() { obs_.reset(); }

    // ---- the format, no server ----------------------------------------------------------------

    void format_default_and_escapes() {
        QCOMPARE(qba(hi::application_name(hi::default_format, kApp, "orders.daily-rollup")),
                 qba("billing-worker pglock:orders.daily-rollup"));
        // No application name of its own: no leading space.
        QCOMPARE(qba(hi::application_name(hi::default_format, "", "orders")), qba("pglock:orders"));
        // Spaces, '%' and non-ASCII are escaped: PostgreSQL would turn the UTF-8 into '?'.
        QCOMPARE(qba(hi::escape("a b%\xd1\x91")), qba("a%20b%25%D1%91"));
        QCOMPARE(qba(hi::application_name("{lock} on {app}", "w1", "x")), qba("pglock:x on w1"));
        const auto m = hi::mentions("w1 pglock:a%20b%25%D1%91 pglock:second xpglock:not");
        QCOMPARE(m.size(), std::size_t(2));
        QCOMPARE(qba(m[0].name), qba("a b%\xd1\x91"));
        QVERIFY(m[0].complete);
        QCOMPARE(qba(m[1].name), qba("second"));
        QVERIFY(hi::mentions("pglock:bad%zzescape").empty());
    }

    void format_cuts_app_first_then_the_name_on_a_character_boundary() {
        // A long application name is shortened so that the lock part stays whole.
        const std::string long_app(60, 'a');
        const std::string named = hi::application_name(hi::default_format, long_app, "orders.daily");
        QVERIFY(named.size() <= hi::max_bytes);
        QVERIFY2(named.ends_with(" pglock:orders.daily"), named.c_str());
        QVERIFY(named.starts_with("aaaa"));

        // A multibyte name that cannot fit: cut at a whole character, marked with a bare '%'.
        for (int letters = 20; letters < 40; ++letters) {
            const std::string name = cyrillic_name("x", letters);
            const std::string cut = hi::application_name(hi::default_format, kApp, name);
            QVERIFY2(cut.size() <= hi::max_bytes, cut.c_str());
            QVERIFY2(cut.ends_with('%'), cut.c_str());
            const auto m = hi::mentions(cut);
            QCOMPARE(m.size(), std::size_t(1));
            QVERIFY(!m[0].complete);
            QVERIFY2(name.starts_with(m[0].name), m[0].name.c_str());
            QVERIFY2(valid_utf8(m[0].name), "the cut split a UTF-8 sequence");
            QVERIFY(m[0].name.size() >= 2);
        }
    }

    // ---- against the server -------------------------------------------------------------------

    void named_while_held_restored_after_release_each_mode() {
        guarded([&] {
            pglock::Pool pool(dsn_, pool_options(1));
            for (const Mode mode : {Mode::exclusive, Mode::shared}) {
                for (const bool wait : {false, true}) {
                    const auto name = pgt::unique_name(mode == Mode::shared ? "shared" : "exclusive");
                    pglock::LockOptions lo;
                    lo.mode = mode;
                    Lock lk(pool, name, lo);
                    std::optional<pglock::Guard> g;
                    if (wait) g.emplace(lk.acquire());
                    else g = lk.try_acquire();
                    QVERIFY(g.has_value());
                    const std::string shown = app_of(g->backend_pid());
                    const std::string expected = hi::application_name(hi::default_format, kApp, name);
                    QCOMPARE(qba(shown), qba(expected));
                    QVERIFY(shown.size() <= hi::max_bytes);
                    const int pid = g->backend_pid();
                    QVERIFY(!g->release());
                    QCOMPARE(qba(app_of(pid)), qba(kApp));  // the same session, back in the pool
                }
            }
        });
    }

    void contended_try_leaves_name_alone_and_blocking_sets_it_after_the_grant() {
        guarded([&] {
            pglock::Pool pool(dsn_, pool_options(2));
            const auto name = short_name("blocking");
            Lock lk(pool, name);
            RawConn other(dsn_);
            QVERIFY(other.try_lock(lk.key()));
            QVERIFY(!lk.try_acquire().has_value());
            QCOMPARE(qba(pooled_app(pool)), qba(kApp));

            std::optional<pglock::Guard> g;
            std::thread waiter([&] { guarded([&] { g.emplace(lk.acquire()); }); });
            int waiting_pid = 0;
            QVERIFY(wait_until([&] {
                const auto w = pgt::waiting_pids(*obs_, lk.key());
                if (!w.empty()) waiting_pid = w.front();
                return !w.empty();
            }, 5s));
            // Waiting is not holding: the waiter does not claim the name yet.
            QCOMPARE(qba(app_of(waiting_pid)), qba(kApp));
            QVERIFY(other.unlock(lk.key()));
            waiter.join();
            QVERIFY(g.has_value());
            QCOMPARE(g->backend_pid(), waiting_pid);
            QCOMPARE(qba(app_of(waiting_pid)), qba(std::string(kApp) + " pglock:" + name));
        });
    }

    void multibyte_name_cut_to_63_bytes() {
        guarded([&] {
            pglock::Pool pool(dsn_, pool_options(1));
            const std::string name = cyrillic_name("orders.", 30);
            Lock lk(pool, name);
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            const std::string shown = app_of(g->backend_pid());
            QVERIFY2(shown.size() <= 63, shown.c_str());
            QVERIFY2(shown.find('?') == std::string::npos, "the server replaced bytes: the name was not escaped");
            const auto m = hi::mentions(shown);
            QCOMPARE(m.size(), std::size_t(1));
            QVERIFY(!m[0].complete);
            QVERIFY(name.starts_with(m[0].name));
            QVERIFY(valid_utf8(m[0].name));
            QVERIFY(m[0].name.size() > std::string("orders.").size());
        });
    }

    void opt_out_per_lock_and_per_pool() {
        guarded([&] {
            pglock::Pool pool(dsn_, pool_options(2));
            pglock::LockOptions off;
            off.show_in_application_name = false;
            Lock quiet(pool, short_name("lock_off"), off);
            auto g = quiet.try_acquire();
            QVERIFY(g.has_value());
            QCOMPARE(qba(app_of(g->backend_pid())), qba(kApp));
            QVERIFY(!g->release());

            auto po = pool_options(2);
            po.show_in_application_name = false;
            pglock::Pool quiet_pool(dsn_, po);
            Lock lk(quiet_pool, short_name("pool_off"));
            auto g2 = lk.acquire();
            QCOMPARE(qba(app_of(g2.backend_pid())), qba(kApp));

            // A per-lock format wins over the pool's.
            pglock::LockOptions custom;
            custom.application_name_format = "{lock} ({app})";
            const auto name = short_name("custom");
            Lock formatted(pool, name, custom);
            auto g3 = formatted.try_acquire();
            QVERIFY(g3.has_value());
            QCOMPARE(qba(app_of(g3->backend_pid())), qba(hi::application_name("{lock} ({app})", kApp, name)));
        });
    }

    void several_locks_each_session_names_its_own() {
        guarded([&] {
            pglock::Pool pool(dsn_, pool_options(4));
            const auto a = short_name("a"), b = short_name("b");
            Lock la(pool, a), lb(pool, b);
            auto ga = la.acquire();
            auto gb = lb.acquire();
            QVERIFY(ga.backend_pid() != gb.backend_pid());
            QCOMPARE(qba(app_of(ga.backend_pid())), qba(std::string(kApp) + " pglock:" + a));
            QCOMPARE(qba(app_of(gb.backend_pid())), qba(std::string(kApp) + " pglock:" + b));
            QVERIFY(!ga.release());
            QCOMPARE(qba(app_of(ga.backend_pid())), qba(kApp));
            QCOMPARE(qba(app_of(gb.backend_pid())), qba(std::string(kApp) + " pglock:" + b));
        });
    }

    void transaction_lock_names_until_the_transaction_ends() {
        guarded([&] {
            pglock::Pool pool(dsn_, pool_options(1));
            const auto a = short_name("xa"), b = short_name("xb");
            Lock la(pool, a), lb(pool, b);
            for (const bool commit : {true, false}) {
                pglock::Transaction tx(pool);
                const int pid = tx.session().backend_pid();
                QVERIFY(la.try_acquire_xact(&tx));
                QCOMPARE(qba(app_of(pid)), qba(std::string(kApp) + " pglock:" + a));
                // A second one in the same transaction keeps the first in view (cut to 63 bytes).
                QVERIFY(lb.try_acquire_xact(&tx));
                const auto m = hi::mentions(app_of(pid));
                QVERIFY(m.size() >= 1);
                QCOMPARE(qba(m[0].name), qba(a));
                if (commit) tx.commit();
                else tx.rollback();
                // set_config(..., true): gone with the transaction, without a statement of ours.
                QCOMPARE(qba(app_of(pid)), qba(kApp));
            }
        });
    }

    void release_after_the_session_died() {
        guarded([&] {
            pglock::Pool pool(dsn_, pool_options(1));
            Lock lk(pool, pgt::unique_name());
            auto g = lk.try_acquire();
            QVERIFY(g.has_value());
            const int pid = g->backend_pid();
            QVERIFY(obs_->boolean("SELECT pg_terminate_backend($1::int)", {std::to_string(pid)}));
            QVERIFY(wait_until([&] { return g->lost(); }, 5s));
            QCOMPARE(g->release(), make_error_code(pglock::Errc::lock_lost));
            // The pool's next session is a new one with the pool's own name.
            auto s = pool.acquire();
            QVERIFY(s->backend_pid() != pid);
            QCOMPARE(qba(app_of(s->backend_pid())), qba(kApp));
        });
    }

    // One statement to take the lock and one to release it, as without the feature: counted on
    // the wire with libpq's protocol trace (every extended-protocol statement ends in a Sync).
    void no_extra_round_trip() {
        guarded([&] {
            for (const bool named : {true, false}) {
                auto po = pool_options(1);
                po.show_in_application_name = named;
                pglock::Pool pool(dsn_, po);
                Lock lk(pool, pgt::unique_name());
                { auto warm = lk.acquire(); }  // prepares the statements, once per session
                { auto warm = lk.try_acquire(); }

                char* buffer = nullptr;
                std::size_t size = 0;
                FILE* trace = open_memstream(&buffer, &size);
                QVERIFY(trace);
                {
                    auto s = pool.acquire();
                    PQtrace(s->native_handle(), trace);
                    PQsetTraceFlags(s->native_handle(), PQTRACE_SUPPRESS_TIMESTAMPS);
                }
                int pid = 0;
                {
                    auto g = lk.try_acquire();
                    QVERIFY(g.has_value());
                    pid = g->backend_pid();
                    auto g2 = std::move(*g);
                    QVERIFY(!g2.release());
                    auto g3 = lk.acquire();
                    QVERIFY(!g3.release());
                }
                {
                    auto s = pool.acquire();
                    QCOMPARE(s->backend_pid(), pid);  // the traced session did all of it
                    PQuntrace(s->native_handle());
                }
                std::fclose(trace);
                const std::string text(buffer, size);
                std::free(buffer);
                const auto [syncs, parses, queries] = pgt::count_frontend_messages(text);
                QVERIFY2(syncs == 4, (std::to_string(syncs) + " statements for try+release+acquire+release:\n" + text).c_str());
                QCOMPARE(parses, 0);
                QCOMPARE(queries, 0);
            }
        });
    }

    // ---- the monitor reads it back -------------------------------------------------------------

    void monitor_names_an_uncatalogued_key_from_its_holder() {
        guarded([&] {
            pglock::Pool pool(dsn_, pool_options(2));
            const auto name = short_name("monitor");
            Lock lk(pool, name);
            auto g = lk.acquire();
            const auto snap = poll();
            const auto* e = find(snap, lk.key());
            QVERIFY(e);
            QVERIFY(e->holder_name.has_value());
            QCOMPARE(qba(e->holder_name->name), qba(name));
            QVERIFY(e->holder_name->verified);
            QCOMPARE(e->holder_name->pid, g.backend_pid());
            const auto& b = snap.backends.at(g.backend_pid());
            QCOMPARE(qba(b.application_name), qba(std::string(kApp) + " pglock:" + name));
        });
    }

    void monitor_shows_a_cut_name_as_an_unverified_prefix() {
        guarded([&] {
            pglock::Pool pool(dsn_, pool_options(2));
            const std::string name = cyrillic_name("orders.", 40);
            Lock lk(pool, name);
            auto g = lk.acquire();
            const auto* e = [&] {
                static pglock::monitor::Snapshot snap;
                snap = poll();
                return find(snap, lk.key());
            }();
            QVERIFY(e && e->holder_name);
            QVERIFY(!e->holder_name->verified);
            QVERIFY(name.starts_with(e->holder_name->name));
            QVERIFY(e->holder_name->name.size() < name.size());
        });
    }

    void monitor_does_not_trust_a_name_that_does_not_hash_to_the_key() {
        guarded([&] {
            // A session that claims a name in its application_name but holds another key.
            RawConn liar(dsn_);
            liar.query("SELECT set_config('application_name', 'x pglock:orders.daily', false)");
            const auto key = pglock::key_of(short_name("other"));
            QVERIFY(liar.try_lock(key));
            const auto snap = poll();
            const auto* e = find(snap, key);
            QVERIFY(e);
            QVERIFY2(!e->holder_name.has_value(), "a name that does not hash to the key was shown");
        });
    }
};

QTEST_GUILESS_MAIN(TestHolderIdentity)
#include "test_holder_identity.moc"
