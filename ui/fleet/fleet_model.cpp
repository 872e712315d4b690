#include "fleet/fleet_model.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "actions/read_only_switch.hpp"
#include "pglock/duration_text.hpp"
#include "pglock/key.hpp"
#include "session/server_session.hpp"

namespace lockscope {

namespace {
QString seconds(const std::optional<double>& s) {
    return s ? QString::fromStdString(pglock::duration_text(*s)) : QString();
}
}  // namespace

FleetModel::FleetModel(QObject* parent) : QAbstractTableModel(parent) {
    notify_.setSingleShot(true);
    notify_.setInterval(kNotifyInterval);
    connect(&notify_, &QTimer::timeout, this, &FleetModel::notifyViews);
}

void FleetModel::changed() {
    if (!notify_.isActive()) notify_.start();
}

void FleetModel::notifyViews() {
    if (rows_.empty()) return;
    emit dataChanged(index(0, 0), index(static_cast<int>(rows_.size()) - 1, ColumnCount - 1));
}

void FleetModel::addSession(ServerSession* session) {
    if (session == nullptr || rowOf(session) >= 0) return;
    const int at = static_cast<int>(rows_.size());
    beginInsertRows({}, at, at);
    Row row;
    row.session = session;
    rows_.push_back(std::move(row));
    endInsertRows();
    connect(session, &ServerSession::resultArrived, this, [this, session](const PollResultPtr& r) { onResult(session, r); });
    connect(session, &ServerSession::stateChanged, this, [this, session] { onChanged(session); });
    connect(session, &ServerSession::cleared, this, [this, session] { clearRow(session); });
    connect(&session->readOnlySwitch(), &ReadOnlySwitch::changed, this, [this, session] { onChanged(session); });
    connect(session, &QObject::destroyed, this, [this, session] { removeSession(session); });
    if (session->latest()) onResult(session, session->latest());
    rerank();
}

void FleetModel::removeSession(ServerSession* session) {
    const int row = rowOf(session);
    if (row < 0) return;
    // destroyed() comes after ~ServerSession: its signals are gone, only the pointer is compared.
    disconnect(session, nullptr, this, nullptr);
    beginRemoveRows({}, row, row);
    rows_.erase(rows_.begin() + row);
    endRemoveRows();
    rerank();
}

ServerSession* FleetModel::session(int row) const {
    return row >= 0 && row < static_cast<int>(rows_.size()) ? rows_[static_cast<std::size_t>(row)].session : nullptr;
}

int FleetModel::rowOf(const ServerSession* session) const {
    const auto it = std::find_if(rows_.begin(), rows_.end(), [session](const Row& r) { return r.session == session; });
    return it == rows_.end() ? -1 : static_cast<int>(it - rows_.begin());
}

quint64 FleetModel::pollCount(int row) const { return rows_.at(static_cast<std::size_t>(row)).polls; }
int FleetModel::rank(int row) const { return rows_.at(static_cast<std::size_t>(row)).rank; }

bool FleetModel::unreachable(const Row& row) const {
    return row.session->poller().state() == PollState::disconnected || row.session->stale();
}

FleetModel::ServerState FleetModel::state(int row) const {
    const Row& r = rows_.at(static_cast<std::size_t>(row));
    if (unreachable(r)) return ServerState::retrying;
    switch (r.session->poller().state()) {
        case PollState::stopped: return ServerState::stopped;
        case PollState::connecting: return ServerState::connecting;
        case PollState::disconnected: return ServerState::retrying;
        case PollState::connected: break;
    }
    if (!r.polled) return ServerState::connecting;
    return r.inRecovery ? ServerState::standby : ServerState::primary;
}

QString FleetModel::stateText(ServerState state) {
    switch (state) {
        case ServerState::retrying: return tr("disconnected, retrying");
        case ServerState::connecting: return tr("connecting");
        case ServerState::stopped: return tr("stopped");
        case ServerState::standby: return tr("standby");
        case ServerState::primary: return tr("primary");
    }
    return {};
}

int FleetModel::severity(const Row& row) const {
    if (unreachable(row)) return 2;
    return row.polled && row.session->poller().state() == PollState::connected ? 0 : 1;
}

void FleetModel::onResult(ServerSession* session, const PollResultPtr& result) {
    const int at = rowOf(session);
    if (at < 0 || !result || !result->snapshot) return;
    Row& row = rows_[static_cast<std::size_t>(at)];
    const auto& snap = *result->snapshot;
    row.summary = summarize(*result, thresholds_);
    row.longestWaitName.clear();
    if (row.summary.longestWait) {
        const auto& id = row.summary.longestWait->lock;
        // The snapshot's locks are sorted by id: the lock of the longest wait, for its holder's name.
        const auto it = std::lower_bound(snap.locks.begin(), snap.locks.end(), id,
                                         [](const pglock::monitor::LockEntry& e, const pglock::monitor::LockId& x) {
                                             return pglock::monitor::id_of(e) < x;
                                         });
        const bool found = it != snap.locks.end() && pglock::monitor::id_of(*it) == id;
        row.longestWaitName = session->namer()(id, found ? it->key : pglock::key_of(id.tag),
                                               found ? it->holder_name : std::nullopt).text;
    }
    row.address = snap.port > 0 ? QStringLiteral("%1:%2").arg(QString::fromStdString(snap.host)).arg(snap.port)
                                : QString::fromStdString(snap.host);
    row.inRecovery = snap.in_recovery;
    row.polled = true;
    row.locks = static_cast<int>(snap.locks.size());
    row.latencyMs = snap.latency_ms;
    ++row.polls;
    row.waiters.push_back(row.summary.sessionsWaiting);
    while (row.waiters.size() > static_cast<std::size_t>(kHistoryLength)) row.waiters.pop_front();
    rerank();
    changed();
}

void FleetModel::onChanged(ServerSession* session) {
    const int at = rowOf(session);
    if (at < 0) return;
    rerank();
    changed();
}

void FleetModel::clearRow(ServerSession* session) {
    const int at = rowOf(session);
    if (at < 0) return;
    Row& row = rows_[static_cast<std::size_t>(at)];
    Row fresh;
    fresh.session = session;
    fresh.rank = row.rank;
    row = std::move(fresh);
    rerank();
    changed();
}

void FleetModel::rerank() {
    std::vector<int> order(rows_.size());
    std::iota(order.begin(), order.end(), 0);
    // The tuple of each row in the order of "worst first" (see the header); greater is worse.
    auto badness = [this](const Row& r) {
        const double wait = r.summary.longestWait ? r.summary.longestWait->seconds : -1.0;
        return std::make_tuple(severity(r), wait, r.summary.sessionsWaiting, r.summary.idleInTransactionHolders,
                               r.summary.longestHold.value_or(-1.0));
    };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const Row& ra = rows_[static_cast<std::size_t>(a)];
        const Row& rb = rows_[static_cast<std::size_t>(b)];
        const auto ba = badness(ra), bb = badness(rb);
        if (ba != bb) return ba > bb;
        return ra.session->label() < rb.session->label();
    });
    bool moved = false;
    for (int rank = 0; rank < static_cast<int>(order.size()); ++rank) {
        Row& row = rows_[static_cast<std::size_t>(order[static_cast<std::size_t>(rank)])];
        moved = moved || row.rank != rank;
        row.rank = rank;
    }
    if (moved) changed();
}

int FleetModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(rows_.size()); }
int FleetModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant FleetModel::display(const Row& row, int column) const {
    const bool shown = row.polled;
    switch (column) {
        case Server: return row.session->label();
        case State: return stateText(state(rowOf(row.session)));
        case Address: return row.address;
        case Access: return row.session->readOnlySwitch().on() ? tr("read-only") : tr("read-write");
        case Locks: return shown ? QVariant(row.locks) : QVariant();
        case Waiters: return shown ? QVariant(row.summary.sessionsWaiting) : QVariant();
        case LongestWait:
            if (!row.summary.longestWait) return QString();
            return QStringLiteral("%1 %2").arg(seconds(row.summary.longestWait->seconds), row.longestWaitName);
        case LongestHold: return seconds(row.summary.longestHold);
        case IdleInTransaction: return shown ? QVariant(row.summary.idleInTransactionHolders) : QVariant();
        case XminPin: return seconds(row.summary.longestXminPin);
        case PollLatency: return shown ? QVariant(QStringLiteral("%1 ms").arg(row.latencyMs, 0, 'f', 1)) : QVariant();
        case Trend: return QString();  // drawn by the view's sparkline delegate from WaitersHistoryRole
    }
    return {};
}

QVariant FleetModel::sortValue(const Row& row, int column) const {
    switch (column) {
        case Server: return row.rank;
        case State: return static_cast<int>(state(rowOf(row.session)));
        case Address: return row.address;
        case Access: return row.session->readOnlySwitch().on() ? 1 : 0;
        case Locks: return row.locks;
        case Waiters: return row.summary.sessionsWaiting;
        case LongestWait: return row.summary.longestWait ? row.summary.longestWait->seconds : -1.0;
        case LongestHold: return row.summary.longestHold.value_or(-1.0);
        case IdleInTransaction: return row.summary.idleInTransactionHolders;
        case XminPin: return row.summary.longestXminPin.value_or(-1.0);
        case PollLatency: return row.latencyMs;
        case Trend: return row.waiters.empty() ? 0 : *std::max_element(row.waiters.begin(), row.waiters.end());
    }
    return {};
}

QVariant FleetModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& row = rows_[static_cast<std::size_t>(index.row())];
    switch (role) {
        case Qt::DisplayRole: return display(row, index.column());
        case SortRole: return sortValue(row, index.column());
        case UnreachableRole: return unreachable(row);
        case WaitersHistoryRole: return QVariant::fromValue(QList<int>(row.waiters.begin(), row.waiters.end()));
        case Qt::ToolTipRole:
            if (index.column() == State && unreachable(row) && !row.session->lastPollTime().isEmpty())
                return tr("The numbers are as of the last good poll, %1").arg(row.session->lastPollTime());
            if (index.column() == Address) return tr("The server the last poll reached (a failover shows as a new one)");
            return {};
        case Qt::TextAlignmentRole:
            if (index.column() >= Locks && index.column() != LongestWait && index.column() != Trend)
                return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        default: return {};
    }
}

QVariant FleetModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Server: return tr("Server");
        case State: return tr("State");
        case Address: return tr("Host:port");
        case Access: return tr("Access");
        case Locks: return tr("Locks");
        case Waiters: return tr("Waiters");
        case LongestWait: return tr("Longest wait");
        case LongestHold: return tr("Longest hold");
        case IdleInTransaction: return tr("Idle in xact");
        case XminPin: return tr("Xmin pin");
        case PollLatency: return tr("Poll");
        case Trend: return tr("Waiters, last %1 polls").arg(kHistoryLength);
    }
    return {};
}

}  // namespace lockscope
