// What a controller says when asked to act: accepted (with the id of what it started) or refused
// with a reason a person can read (read-only mode, no connection, nothing to act on).
#pragma once

#include <QString>

namespace lockscope {

struct ActionOutcome {
    quint64 id = 0;   // the own-lock entry it concerns, when there is one
    QString refusal;  // empty when accepted

    bool accepted() const { return refusal.isEmpty(); }
    explicit operator bool() const { return accepted(); }
    static ActionOutcome ok(quint64 id = 0) { return {id, {}}; }
    static ActionOutcome refuse(QString why) { return {0, std::move(why)}; }
};

}  // namespace lockscope
