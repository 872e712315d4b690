// A plain libpq session for the UI tests: the "other application" that holds locks while the
// code under test watches, with nothing of pglock in between.
#pragma once

#include <libpq-fe.h>

#include <string>

namespace pglock::test {

struct PgConn {
    PGconn* c;
    explicit PgConn(const std::string& dsn) : c(PQconnectdb(dsn.c_str())) {}
    ~PgConn() { PQfinish(c); }
    PgConn(const PgConn&) = delete;
    PgConn& operator=(const PgConn&) = delete;
    bool ok() const { return PQstatus(c) == CONNECTION_OK; }
    // The first value of the first row, or "" when the statement returned none or failed.
    std::string one(const std::string& sql) {
        PGresult* r = PQexec(c, sql.c_str());
        std::string v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
        PQclear(r);
        return v;
    }
};

}  // namespace pglock::test
