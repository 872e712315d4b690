// One transaction helper for the app's SQLite stores (catalog, history), so both commit, roll
// back and report failures the same way.
#pragma once

#include <QSqlDatabase>
#include <QSqlError>
#include <QString>

namespace lockscope {

// A write in a transaction: commits when `body` returns true, rolls back otherwise.
template <typename Body>
bool inTransaction(QSqlDatabase& db, QString* error, Body&& body) {
    if (!db.transaction()) {
        *error = QStringLiteral("cannot begin a transaction: %1").arg(db.lastError().text());
        return false;
    }
    if (!body()) {
        db.rollback();
        return false;
    }
    if (!db.commit()) {
        *error = QStringLiteral("commit failed: %1").arg(db.lastError().text());
        db.rollback();
        return false;
    }
    return true;
}

}  // namespace lockscope
