#include "charts/timeline_model.hpp"
#include "models/plain_text.hpp"

#include <QDateTime>

#include <algorithm>
#include <cmath>
#include <optional>

#include "charts/hold_histogram_math.hpp"
#include "models/server_text.hpp"

namespace lockscope::charts {

using pglock::monitor::LockId;

namespace {

// Application names repeat across thousands of bars; past this many distinct ones the intern
// table starts over (bars keep their shared copies) so that it cannot grow without bound.
constexpr qsizetype kMaxInterned = 10000;

bool laneBefore(const std::unique_ptr<TimelineModel::Lane>& lane, const LockId& id) { return lane->id < id; }

bool openBefore(const TimelineModel::Bar& bar, std::pair<int, double> key) {
    return std::pair(bar.pid, bar.start) < key;
}

QString timeText(double epochSeconds) {
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(epochSeconds * 1000.0)))
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

}  // namespace

TimelineModel::TimelineModel(Limits limits, QObject* parent) : QAbstractItemModel(parent), limits_(limits) {
    labelTimer_.setSingleShot(true);
    labelTimer_.setInterval(0);
    connect(&labelTimer_, &QTimer::timeout, this, [this] {
        labelPending(kLabelChunk);
        if (!unlabelled_.empty()) labelTimer_.start();
    });
}

TimelineModel::~TimelineModel() = default;

int TimelineModel::rowOfLane(const LockId& id) const {
    const auto it = std::lower_bound(lanes_.begin(), lanes_.end(), id, laneBefore);
    return it != lanes_.end() && (*it)->id == id ? static_cast<int>(it - lanes_.begin()) : -1;
}

TimelineModel::Lane* TimelineModel::laneOfSerial(quint64 serial) const {
    const auto it = laneOfSerial_.find(serial);
    return it == laneOfSerial_.end() ? nullptr : it->second;
}

std::size_t TimelineModel::barCount() const {
    return finishedCount_ + openBars_;
}

TimelineModel::LaneRef TimelineModel::findLane(const LockId& id) const {
    const auto it = laneOfId_.find(id);
    return it == laneOfId_.end() ? LaneRef{} : LaneRef{it->second, !it->second->inModel};
}

TimelineModel::LaneRef TimelineModel::laneFor(const LockId& id, std::int64_t key, NewLanes& fresh) {
    if (const LaneRef found = findLane(id); found.lane) return found;
    auto lane = std::make_unique<Lane>();
    lane->id = id;
    lane->key = key;
    lane->serial = nextSerial_++;
    Lane* raw = lane.get();
    laneOfId_.emplace(id, raw);
    fresh.push_back(std::move(lane));
    return {raw, true};
}

bool TimelineModel::labelBefore(const Lane* a, const Lane* b) const {
    const int c = a->sortKey->compare(*b->sortKey);
    return c != 0 ? c < 0 : a->id < b->id;
}

void TimelineModel::insertNewLanes(NewLanes& fresh) {
    // In LockId order, without the lanes that got no bar (a finished hold too old to draw).
    std::vector<std::unique_ptr<Lane>> added;
    added.reserve(fresh.size());
    for (auto& lane : fresh) {
        if (lane->barCount() > 0) added.push_back(std::move(lane));
        else laneOfId_.erase(lane->id);
    }
    fresh.clear();
    if (added.empty()) return;
    std::sort(added.begin(), added.end(), [](const auto& a, const auto& b) { return a->id < b->id; });
    laneOfSerial_.reserve(lanes_.size() + added.size());
    for (auto& lane : added) unlabelled_.push_back(lane.get());
    // Runs of new lanes that no existing lane separates go in with one insertion each.
    for (std::size_t i = 0; i < added.size();) {
        const auto at = std::lower_bound(lanes_.begin(), lanes_.end(), added[i]->id, laneBefore);
        std::size_t j = i + 1;
        while (j < added.size() && (at == lanes_.end() || added[j]->id < (*at)->id)) ++j;
        const int row = static_cast<int>(at - lanes_.begin());
        beginInsertRows({}, row, row + static_cast<int>(j - i) - 1);
        for (std::size_t k = i; k < j; ++k) {
            laneOfSerial_.emplace(added[k]->serial, added[k].get());
            added[k]->inModel = true;
        }
        lanes_.insert(at, std::make_move_iterator(added.begin() + static_cast<std::ptrdiff_t>(i)),
                      std::make_move_iterator(added.begin() + static_cast<std::ptrdiff_t>(j)));
        endInsertRows();
        i = j;
    }
    // A few new lanes (a normal poll) are labelled now; thousands (the first poll) in later turns.
    if (unlabelled_.size() <= kLabelChunk / 4) labelPending(unlabelled_.size());
    else if (!labelTimer_.isActive()) labelTimer_.start();
}

void TimelineModel::labelPending(std::size_t maxLanes) {
    const std::size_t n = std::min(maxLanes, unlabelled_.size());
    if (n == 0) return;
    std::vector<const Lane*> labelled;
    labelled.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        Lane* lane = unlabelled_[i];
        lane->label = lockLabel(lane->id, lane->key, namer_);
        lane->sortKey = collator_.sortKey(lane->label);
        labelled.push_back(lane);
    }
    unlabelled_.erase(unlabelled_.begin(), unlabelled_.begin() + static_cast<std::ptrdiff_t>(n));
    const auto before = [this](const Lane* a, const Lane* b) { return labelBefore(a, b); };
    std::sort(labelled.begin(), labelled.end(), before);
    // A merge that binary-searches each new lane's place and copies the lanes before it in one
    // go: a poll with 100 new lanes compares ~1,500 sort keys, not one per existing lane.
    std::vector<const Lane*> merged;
    merged.reserve(byLabel_.size() + labelled.size());
    auto from = byLabel_.cbegin();
    for (const Lane* lane : labelled) {
        const auto at = std::upper_bound(from, byLabel_.cend(), lane, before);
        merged.insert(merged.end(), from, at);
        merged.push_back(lane);
        from = at;
    }
    merged.insert(merged.end(), from, byLabel_.cend());
    byLabel_ = std::move(merged);
}

const std::vector<const TimelineModel::Lane*>& TimelineModel::lanesByLabel() {
    labelPending(unlabelled_.size());
    return byLabel_;
}

QString TimelineModel::intern(const std::string& text) {
    // Looked up by the std::string itself: no QByteArray allocated per bar just to ask.
    if (auto it = interned_.find(text); it != interned_.end()) return it->second;
    if (interned_.size() >= static_cast<std::size_t>(kMaxInterned)) interned_.clear();
    return interned_.emplace(text, serverText(text)).first->second;  // an application_name or a role: shown by the rule
}

void TimelineModel::appendFinished(LaneRef ref, Bar bar) {
    Lane& lane = *ref.lane;
    const bool announce = !ref.isNew;  // a new lane is announced whole when it is inserted
    const QModelIndex parent = announce ? index(rowOf(lane), 0) : QModelIndex();
    const int pos = static_cast<int>(lane.finished.size());
    if (announce) beginInsertRows(parent, pos, pos);
    lane.finished.push_back(std::move(bar));
    finishedOrder_.emplace_back(lane.serial, lane.firstSeq + static_cast<quint64>(pos));
    ++finishedCount_;
    if (announce) endInsertRows();
    if (lane.finished.size() > limits_.maxBarsPerLane) {
        // The lane's oldest-ended bars go; their finishedOrder_ entries become stale.
        const std::size_t excess = lane.finished.size() - limits_.maxBarsPerLane;
        if (announce) beginRemoveRows(parent, 0, static_cast<int>(excess) - 1);
        lane.finished.dropFront(excess);
        lane.firstSeq += excess;
        finishedCount_ -= excess;
        if (announce) endRemoveRows();
    }
}

void TimelineModel::closeOpenBar(int laneRow, std::size_t openIndex, double end) {
    Lane& lane = *lanes_[static_cast<std::size_t>(laneRow)];
    const int row = static_cast<int>(lane.finished.size() + openIndex);
    beginRemoveRows(index(laneRow, 0), row, row);
    Bar bar = std::move(lane.open[openIndex]);
    lane.open.erase(lane.open.begin() + static_cast<std::ptrdiff_t>(openIndex));
    --openBars_;
    endRemoveRows();
    bar.open = false;
    bar.end = std::max(bar.start, end);
    if (bar.end >= latest_ - limits_.maxAgeSeconds) appendFinished({&lane, false}, std::move(bar));
}

void TimelineModel::addPoll(const PollResult& poll) {
    const pglock::monitor::Snapshot* snap = poll.snapshot.get();
    if (snap) latest_ = std::max(latest_, snap->server_now);
    if (snap && (watchedSince_ == 0 || snap->server_now < watchedSince_)) watchedSince_ = snap->server_now;
    std::vector<quint64> touched;
    NewLanes fresh;

    // Holds that ended: their open bars (when we saw them open) move to the finished part.
    for (const auto& hold : poll.finished) {
        if (!hold.end) continue;
        latest_ = std::max(latest_, *hold.end);
        if (const LaneRef ref = findLane(hold.lock); ref.lane && !ref.isNew) {
            Lane& lane = *ref.lane;
            const auto it = std::lower_bound(lane.open.begin(), lane.open.end(), std::pair(hold.pid, hold.start), openBefore);
            if (it != lane.open.end() && it->pid == hold.pid && it->start == hold.start) {
                touched.push_back(lane.serial);
                closeOpenBar(rowOf(lane), static_cast<std::size_t>(it - lane.open.begin()), *hold.end);
                continue;
            }
        }
        if (*hold.end < latest_ - limits_.maxAgeSeconds) continue;
        const LaneRef ref = laneFor(hold.lock, hold.key, fresh);
        touched.push_back(ref.lane->serial);
        Bar bar;
        bar.start = hold.start;
        bar.end = std::max(hold.start, *hold.end);
        bar.pid = hold.pid;
        bar.shared = hold.shared;
        bar.application = intern(hold.application_name);
        bar.user = intern(hold.usename);
        appendFinished(ref, std::move(bar));
    }

    if (snap) {
        // Holds the server shows now: new ones become open bars, and every open bar the snapshot
        // shows is stamped with this poll (a stamp, not a set of 10,000 tuples built per poll).
        const quint64 seq = ++pollSeq_;
        // The snapshot's locks and the lanes are both in LockId order: a cursor along the lanes
        // finds each lock's lane without a hash lookup (at 50,000 locks the lookups, a cache miss
        // or two each, were the largest cost of this function). Lanes not in the model yet (new
        // this poll) and unsorted input go through laneFor().
        auto cursor = lanes_.begin();
        std::optional<LockId> previous;
        for (const auto& entry : snap->locks) {
            if (entry.holders.empty()) continue;
            const LockId id = pglock::monitor::id_of(entry);
            if (previous && id < *previous) cursor = std::lower_bound(lanes_.begin(), lanes_.end(), id, laneBefore);
            previous = id;
            while (cursor != lanes_.end() && (*cursor)->id < id) ++cursor;
            const LaneRef ref = cursor != lanes_.end() && (*cursor)->id == id ? LaneRef{cursor->get(), false}
                                                                               : laneFor(id, entry.key, fresh);
            Lane& lane = *ref.lane;
            for (const auto& holder : entry.holders) {
                const double start = poll.heldSince(id, holder.pid).value_or(snap->server_now);
                const auto it = std::lower_bound(lane.open.begin(), lane.open.end(), std::pair(holder.pid, start), openBefore);
                if (it != lane.open.end() && it->pid == holder.pid && it->start == start) {
                    it->seenInPoll = seq;
                    continue;
                }
                Bar bar;
                bar.start = start;
                bar.end = start;
                bar.pid = holder.pid;
                bar.shared = holder.shared;
                bar.open = true;
                bar.seenInPoll = seq;
                if (const auto b = snap->backends.find(holder.pid); b != snap->backends.end()) {
                    bar.application = intern(b->second.application_name);
                    bar.user = intern(b->second.usename);
                }
                const int pos = static_cast<int>(lane.finished.size() + static_cast<std::size_t>(it - lane.open.begin()));
                if (!ref.isNew) beginInsertRows(index(rowOf(lane), 0), pos, pos);
                lane.open.insert(it, std::move(bar));
                ++openBars_;
                if (!ref.isNew) endInsertRows();
                touched.push_back(lane.serial);
            }
        }
        // Open bars the server no longer shows and no finished hold closed (the tracker dropped
        // the record, or the stream started mid-hold): they ended by this poll. Lanes are walked
        // by row (closing a bar never adds or removes a lane), so no lane is searched for. New
        // lanes are not rows yet, and every bar of theirs is from this poll.
        for (std::size_t row = 0; row < lanes_.size(); ++row) {
            Lane& lane = *lanes_[row];
            for (std::size_t i = lane.open.size(); i-- > 0;) {
                if (lane.open[i].seenInPoll == seq) continue;
                closeOpenBar(static_cast<int>(row), i, snap->server_now);
                touched.push_back(lane.serial);
            }
        }
        recordWaiters(*snap);
    }

    insertNewLanes(fresh);
    trimFinished();
    removeEmptyLanes(touched);
    // Open bars grew by this poll: their Duration cells changed. By row, as above.
    for (std::size_t row = 0; row < lanes_.size(); ++row) {
        const Lane& lane = *lanes_[row];
        if (lane.open.empty()) continue;
        const QModelIndex parent = index(static_cast<int>(row), 0);
        const int first = static_cast<int>(lane.finished.size());
        emit dataChanged(index(first, Duration, parent), index(first + static_cast<int>(lane.open.size()) - 1, Duration, parent));
    }
    emit updated();
}

void TimelineModel::trimFinished() {
    const double cutoff = latest_ - limits_.maxAgeSeconds;
    std::unordered_map<Lane*, std::size_t> drop;  // lane -> how many of its oldest finished bars go
    std::size_t dropping = 0;
    while (!finishedOrder_.empty()) {
        const auto [serial, seq] = finishedOrder_.front();
        Lane* lane = laneOfSerial(serial);
        const std::size_t pending = lane ? drop[lane] : 0;
        if (!lane || seq < lane->firstSeq + pending) {  // already dropped by the lane's cap
            finishedOrder_.pop_front();
            continue;
        }
        const Bar& bar = lane->finished[static_cast<std::size_t>(seq - lane->firstSeq)];
        const bool tooOld = bar.end < cutoff;
        const bool tooMany = finishedCount_ - dropping > limits_.maxBars;
        if (!tooOld && !tooMany) break;
        ++drop[lane];
        ++dropping;
        finishedOrder_.pop_front();
    }
    std::vector<quint64> emptied;
    for (const auto& [lane, count] : drop) {
        if (count == 0) continue;
        beginRemoveRows(index(rowOfLane(lane->id), 0), 0, static_cast<int>(count) - 1);
        lane->finished.dropFront(count);
        lane->firstSeq += count;
        finishedCount_ -= count;
        endRemoveRows();
        emptied.push_back(lane->serial);
    }
    removeEmptyLanes(emptied);
    // Stale entries pile up when per-lane caps drop bars: compact once they outnumber live ones.
    if (finishedOrder_.size() > 2 * finishedCount_ + 1024) {
        std::erase_if(finishedOrder_, [this](const std::pair<quint64, quint64>& e) {
            const Lane* lane = laneOfSerial(e.first);
            return !lane || e.second < lane->firstSeq;
        });
    }
}

void TimelineModel::removeEmptyLanes(const std::vector<quint64>& candidates) {
    std::vector<std::unique_ptr<Lane>> gone;  // kept alive until byLabel_ no longer points at them
    for (quint64 serial : candidates) {
        Lane* lane = laneOfSerial(serial);
        if (!lane || lane->barCount() != 0) continue;
        const int row = rowOfLane(lane->id);
        beginRemoveRows({}, row, row);
        laneOfSerial_.erase(serial);
        laneOfId_.erase(lane->id);
        lane->gone = true;
        gone.push_back(std::move(lanes_[static_cast<std::size_t>(row)]));
        lanes_.erase(lanes_.begin() + row);
        endRemoveRows();
    }
    // One pass for all of them, not a search and a shift per lane.
    if (!gone.empty()) {
        std::erase_if(byLabel_, [](const Lane* lane) { return lane->gone; });
        std::erase_if(unlabelled_, [](const Lane* lane) { return lane->gone; });
    }
}

void TimelineModel::recordWaiters(const pglock::monitor::Snapshot& snap) {
    int waiting = 0;
    for (const auto& entry : snap.locks) waiting += static_cast<int>(entry.waiters.size());
    waiters_.push_back({snap.server_now, waiting});
    const double cutoff = latest_ - limits_.maxAgeSeconds;
    while (!waiters_.empty() && (waiters_.front().time < cutoff || waiters_.size() > limits_.maxWaiterSamples))
        waiters_.pop_front();
}

void TimelineModel::clear() {
    beginResetModel();
    labelTimer_.stop();
    byLabel_.clear();
    unlabelled_.clear();
    lanes_.clear();
    laneOfSerial_.clear();
    laneOfId_.clear();
    openBars_ = 0;
    finishedOrder_.clear();
    finishedCount_ = 0;
    waiters_.clear();
    latest_ = 0;
    watchedSince_ = 0;
    interned_.clear();
    endResetModel();
    emit updated();
}

void TimelineModel::setNamer(LockNamer namer) {
    namer_ = std::move(namer);
    refreshNames();
}

void TimelineModel::refreshNames() {
    labelTimer_.stop();
    unlabelled_.clear();
    byLabel_.clear();
    for (auto& lane : lanes_) {
        lane->label = lockLabel(lane->id, lane->key, namer_);
        lane->sortKey = collator_.sortKey(lane->label);
        byLabel_.push_back(lane.get());
    }
    std::sort(byLabel_.begin(), byLabel_.end(), [this](const Lane* a, const Lane* b) { return labelBefore(a, b); });
    if (!lanes_.empty()) emit dataChanged(index(0, Label), index(laneCount() - 1, Label));
    emit updated();
}

void TimelineModel::relabel(const std::vector<std::int64_t>& keys) {
    bool changed = false;
    const auto before = [this](const Lane* a, const Lane* b) { return labelBefore(a, b); };
    for (std::int64_t key : keys) {
        Lane* lane = findLane(bigintLockId(key)).lane;
        // Absent, or not labelled yet: labelPending() will ask the namer, which knows the name now.
        if (!lane || !lane->inModel || !lane->sortKey) continue;
        QString label = lockLabel(lane->id, lane->key, namer_);
        if (label == lane->label) continue;
        // Rare (a lock that got its name after its lane was drawn): a linear search is fine.
        if (const auto it = std::find(byLabel_.begin(), byLabel_.end(), lane); it != byLabel_.end()) byLabel_.erase(it);
        lane->label = std::move(label);
        lane->sortKey = collator_.sortKey(lane->label);
        byLabel_.insert(std::upper_bound(byLabel_.begin(), byLabel_.end(), lane, before), lane);
        const int row = rowOf(*lane);
        emit dataChanged(index(row, Label), index(row, Label));
        changed = true;
    }
    if (changed) emit updated();
}

// ---- item model ----------------------------------------------------------------------------

QModelIndex TimelineModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount) return {};
    if (!parent.isValid()) return row < laneCount() ? createIndex(row, column, quintptr(0)) : QModelIndex();
    if (parent.internalId() != 0 || parent.column() != 0) return {};
    const Lane& lane = laneAt(parent.row());
    if (static_cast<std::size_t>(row) >= lane.barCount()) return {};
    return createIndex(row, column, quintptr(lane.serial));
}

QModelIndex TimelineModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == 0) return {};
    const Lane* lane = laneOfSerial(child.internalId());
    if (!lane) return {};
    return createIndex(rowOfLane(lane->id), 0, quintptr(0));
}

int TimelineModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return laneCount();
    if (parent.internalId() != 0 || parent.column() != 0) return 0;
    return static_cast<int>(laneAt(parent.row()).barCount());
}

int TimelineModel::columnCount(const QModelIndex& parent) const {
    Q_UNUSED(parent);
    return ColumnCount;
}

QVariant TimelineModel::barData(const Lane& lane, const Bar& bar, int column, int role) const {
    switch (role) {
        case Qt::DisplayRole:
            switch (column) {
                case Label: return QStringLiteral("pid %1").arg(bar.pid);
                case Start: return timeText(bar.start);
                case End: return bar.open ? tr("open") : timeText(bar.end);
                case Duration: return formatSeconds(endOf(bar) - bar.start);
                case Pid: return bar.pid;
                case Application: return bar.application;
                case User: return bar.user;
                case Mode: return bar.shared ? tr("shared") : tr("exclusive");
                default: return {};
            }
        case KeyRole: return static_cast<qlonglong>(lane.key);
        case StartRole: return bar.start;
        case EndRole: return bar.open ? QVariant() : QVariant(bar.end);
        case IsOpenRole: return bar.open;
        default: return {};
    }
}

QVariant TimelineModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
    if (index.internalId() == 0) {
        const Lane& lane = laneAt(index.row());
        switch (role) {
            case Qt::DisplayRole: return index.column() == Label ? QVariant(labelOf(lane)) : QVariant();
            case Qt::ToolTipRole:
                return index.column() == Label ? QVariant(plainToolTip(QStringLiteral("%1\nkey %2").arg(labelOf(lane)).arg(lane.key))) : QVariant();
            case KeyRole: return static_cast<qlonglong>(lane.key);
            default: return {};
        }
    }
    const Lane* lane = laneOfSerial(index.internalId());
    if (!lane) return {};
    return barData(*lane, lane->barAt(static_cast<std::size_t>(index.row())), index.column(), role);
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Label: return tr("Lock / holder");
        case Start: return tr("Start");
        case End: return tr("End");
        case Duration: return tr("Duration");
        case Pid: return tr("PID");
        case Application: return tr("Application");
        case User: return tr("User");
        case Mode: return tr("Mode");
        default: return {};
    }
}

}  // namespace lockscope::charts
