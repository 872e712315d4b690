// A tenant playing the attacker on a cluster of the test's own: a login role and a database of its
// own (SQL_ASCII, so the server checks no encoding), a schema and a table in it, every name
// carrying the bytes of hostile_text.hpp. The operator is the superuser, looking at the tenant's
// database the way an on-call engineer would. Chain is the incident itself: a tenant session
// holding an ACCESS EXCLUSIVE lock on the table in an open transaction, another that holds an
// advisory lock and waits to read that table, and a third that waits for the advisory lock.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "hostile_text.hpp"
#include "own_cluster.hpp"
#include "pg_conn.hpp"

namespace pglock::test::hostile {

// 'value' for a conninfo string: any bytes but NUL, with ' and \ escaped.
inline std::string conninfo_value(std::string_view v) {
    std::string out = "'";
    for (const char c : v) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

// "ident" for SQL (none of the hostile names holds a double quote).
inline std::string ident(std::string_view name) { return "\"" + std::string(name) + "\""; }

inline void exec(PgConn& conn, const std::string& sql) {
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(conn.c, sql.c_str()), &PQclear);
    const auto status = PQresultStatus(r.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        throw std::runtime_error(inert(sql) + ": " + inert(PQerrorMessage(conn.c)));
}

struct Tenant {
    std::string role = with_raw("r");
    std::string database = "d" + std::string(utf8);  // pg_database is shared: its names are read in UTF-8 databases too
    std::string schema = with_raw("s");
    std::string table = with_raw("t");
    std::string socket_dir;
    int port = 0;

    std::string relation() const { return ident(schema) + "." + ident(table); }
    // The tenant's own sessions, over the unix socket (trust).
    std::string dsn() const {
        return "host=" + socket_dir + " port=" + std::to_string(port) + " user=" + conninfo_value(role) +
               " dbname=" + conninfo_value(database) + " application_name=" + conninfo_value(utf8);
    }
    // The operator: the superuser, in the tenant's database.
    std::string operator_dsn() const {
        return "host=" + socket_dir + " port=" + std::to_string(port) + " user=postgres dbname=" + conninfo_value(database);
    }
};

// Creates the tenant: its role and database (made from a SQL_ASCII database, since the role's
// name is not UTF-8), then, as the tenant, its schema and table with one row.
inline Tenant make_tenant(const OwnCluster& cluster) {
    Tenant t;
    t.socket_dir = cluster.dir();
    t.port = cluster.port();
    {
        PgConn admin(cluster.admin_dsn());
        if (!admin.ok()) throw std::runtime_error("admin: " + std::string(PQerrorMessage(admin.c)));
        exec(admin, "CREATE DATABASE tenant_setup ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
    }
    {
        PgConn setup("host=" + t.socket_dir + " port=" + std::to_string(t.port) + " user=postgres dbname=tenant_setup");
        if (!setup.ok()) throw std::runtime_error("setup: " + std::string(PQerrorMessage(setup.c)));
        exec(setup, "CREATE ROLE " + ident(t.role) + " LOGIN");
        exec(setup, "CREATE DATABASE " + ident(t.database) + " OWNER " + ident(t.role) +
                        " ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
    }
    PgConn tenant(t.dsn());
    if (!tenant.ok()) throw std::runtime_error("tenant: " + inert(PQerrorMessage(tenant.c)));
    exec(tenant, "CREATE SCHEMA " + ident(t.schema));
    exec(tenant, "CREATE TABLE " + t.relation() + " (id int PRIMARY KEY)");
    exec(tenant, "INSERT INTO " + t.relation() + " VALUES (1)");
    return t;
}

// A tenant session that sends a statement and does not wait for its answer.
class Waiting {
public:
    explicit Waiting(const std::string& dsn) : conn_(dsn) {
        if (!conn_.ok()) throw std::runtime_error("tenant session: " + inert(PQerrorMessage(conn_.c)));
    }
    ~Waiting() {
        PQrequestCancel(conn_.c);  // a statement still waiting ends now, not at PQfinish's leisure
    }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
    PgConn& conn() { return conn_; }
    int pid() const { return PQbackendPID(conn_.c); }
    void send(const std::string& sql) {
        if (!PQsendQuery(conn_.c, sql.c_str())) throw std::runtime_error("send: " + inert(PQerrorMessage(conn_.c)));
    }

private:
    PgConn conn_;
};

// root: BEGIN; LOCK the tenant's table. holder: pg_advisory_lock(key), then a read of the table,
// which waits for root. waiter: pg_advisory_lock(key), which waits for holder. The constructor
// returns once the server shows both waits (or throws after 15 s).
class Chain {
public:
    Chain(const Tenant& t, std::int64_t key) : root_(t.dsn()), holder_(t.dsn()), waiter_(t.dsn()) {
        exec(root_.conn(), "BEGIN");
        exec(root_.conn(), "LOCK TABLE " + t.relation() + " IN ACCESS EXCLUSIVE MODE");
        exec(holder_.conn(), "SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        holder_.send("SELECT count(*) FROM " + t.relation());
        waiter_.send("SELECT pg_advisory_lock(" + std::to_string(key) + ")");
        PgConn look(t.operator_dsn());
        const std::string waits = "SELECT count(*) FROM pg_locks WHERE NOT granted AND pid IN (" +
                                  std::to_string(holder_.pid()) + ", " + std::to_string(waiter_.pid()) + ")";
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        while (look.one(waits) != "2") {
            if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("the chain's waits never showed");
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    int root() const { return root_.pid(); }
    int holder() const { return holder_.pid(); }
    int waiter() const { return waiter_.pid(); }

private:
    Waiting root_, holder_, waiter_;
};

}  // namespace pglock::test::hostile
