#include "history/history_record.hpp"

namespace lockscope::history {
namespace {

template <typename Event>
Record common(Kind kind, const Event& e, const LockName& name) {
    Record r;
    r.kind = kind;
    r.name = name.name;
    r.nameSource = name.source;
    r.key = e.key;
    r.intPair = e.lock.form == pglock::monitor::KeyForm::int_pair;
    r.pid = e.pid;
    r.application = QString::fromStdString(e.application_name);
    r.user = QString::fromStdString(e.usename);
    r.shared = e.shared;
    r.started = e.start;
    r.ended = e.end.value_or(e.start);
    return r;
}

}  // namespace

Record fromHold(const pglock::monitor::Hold& hold, const LockName& name) {
    Record r = common(Kind::hold, hold, name);
    r.unseen = hold.unseen;
    return r;
}

Record fromWait(const pglock::monitor::Wait& wait, const LockName& name) {
    Record r = common(Kind::wait, wait, name);
    r.waitedOn.reserve(static_cast<qsizetype>(wait.blocked_by.size()));
    for (int pid : wait.blocked_by) r.waitedOn.append(pid);
    return r;
}

}  // namespace lockscope::history
