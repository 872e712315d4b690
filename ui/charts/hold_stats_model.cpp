#include "charts/hold_stats_model.hpp"
#include "models/plain_text.hpp"
#include "stores/name_import.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace lockscope::charts {

using pglock::monitor::LockId;

namespace {

bool byId(const std::unique_ptr<HoldStatsModel::LockStats>& s, const LockId& id) { return s->id < id; }

}  // namespace

HoldStatsModel::HoldStatsModel(std::size_t maxRows, QObject* parent)
    : QAbstractTableModel(parent), maxRows_(std::max<std::size_t>(1, maxRows)) {}

int HoldStatsModel::rowOfLock(const LockId& id) const {
    const auto it = std::lower_bound(rows_.begin(), rows_.end(), id, byId);
    return it != rows_.end() && (*it)->id == id ? static_cast<int>(it - rows_.begin()) : -1;
}

std::unique_ptr<HoldStatsModel::LockStats> HoldStatsModel::newRow(const LockId& id, std::int64_t key) const {
    auto s = std::make_unique<LockStats>();
    s->id = id;
    s->key = key;
    s->label = lockLabel(id, key, namer_);
    return s;
}

int HoldStatsModel::ensureRow(const LockId& id, std::int64_t key) {
    const auto it = std::lower_bound(rows_.begin(), rows_.end(), id, byId);
    const int row = static_cast<int>(it - rows_.begin());
    if (it != rows_.end() && (*it)->id == id) return row;
    beginInsertRows({}, row, row);
    rows_.insert(it, newRow(id, key));
    endInsertRows();
    return row;
}

void HoldStatsModel::addPoll(const PollResult& poll) {
    if (poll.finished.empty()) return;
    std::set<LockId> touched;                           // rows that were there before this poll
    std::map<LockId, std::unique_ptr<LockStats>> fresh;  // rows new in this poll, inserted below
    for (const auto& hold : poll.finished) {
        if (!hold.end) continue;
        LockStats* s = nullptr;
        if (const int row = rowOfLock(hold.lock); row >= 0) {
            s = rows_[static_cast<std::size_t>(row)].get();
            touched.insert(hold.lock);
        } else {
            auto& slot = fresh[hold.lock];
            if (!slot) slot = newRow(hold.lock, hold.key);
            s = slot.get();
        }
        const double seconds = std::max(0.0, hold.duration());
        s->observed[bucketOf(seconds)] += 1;
        s->count += 1;
        s->sum += seconds;
        s->max = std::max(s->max, seconds);
        s->lastEnd = std::max(s->lastEnd, *hold.end);
    }
    // New rows go in by runs that no existing row separates: one insertion each.
    for (auto it = fresh.begin(); it != fresh.end();) {
        const auto at = std::lower_bound(rows_.begin(), rows_.end(), it->first, byId);
        auto end = std::next(it);
        while (end != fresh.end() && (at == rows_.end() || end->first < (*at)->id)) ++end;
        const int row = static_cast<int>(at - rows_.begin());
        std::vector<std::unique_ptr<LockStats>> run;
        for (auto r = it; r != end; ++r) run.push_back(std::move(r->second));
        beginInsertRows({}, row, row + static_cast<int>(run.size()) - 1);
        rows_.insert(at, std::make_move_iterator(run.begin()), std::make_move_iterator(run.end()));
        endInsertRows();
        it = end;
    }
    // After all inserts, so that the rows named are where they finally are.
    for (const LockId& id : touched) {
        const int row = rowOfLock(id);
        emit dataChanged(index(row, Count), index(row, ColumnCount - 1));
    }
    evict();
}

void HoldStatsModel::evict() {
    if (rows_.size() <= maxRows_) return;
    // 2% below the cap: eviction runs every few polls, each time removing few rows (its cost is
    // per removed range, so a big batch at once is a visible pause).
    const std::size_t keep = std::max<std::size_t>(1, maxRows_ - maxRows_ / 50);
    // The candidates, oldest last hold first; rows with scraped data are not candidates.
    std::vector<std::pair<double, std::size_t>> candidates;
    for (std::size_t i = 0; i < rows_.size(); ++i)
        if (!rows_[i]->scraped) candidates.emplace_back(rows_[i]->lastEnd, i);
    const std::size_t excess = std::min(candidates.size(), rows_.size() - keep);
    if (excess == 0) return;
    std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(excess - 1), candidates.end());
    std::vector<std::size_t> drop;
    drop.reserve(excess);
    for (std::size_t i = 0; i < excess; ++i) drop.push_back(candidates[i].second);
    std::sort(drop.begin(), drop.end());
    // From the back, one removal per run of consecutive rows, so the rows still to drop keep their numbers.
    for (std::size_t end = drop.size(); end > 0;) {
        std::size_t begin = end - 1;
        while (begin > 0 && drop[begin - 1] + 1 == drop[begin]) --begin;
        const auto first = static_cast<std::ptrdiff_t>(drop[begin]), last = static_cast<std::ptrdiff_t>(drop[end - 1]);
        beginRemoveRows({}, static_cast<int>(first), static_cast<int>(last));
        for (std::ptrdiff_t r = first; r <= last; ++r)
            for (std::size_t b = 0; b < kBucketCount; ++b) evicted_[b] += rows_[static_cast<std::size_t>(r)]->observed[b];
        rows_.erase(rows_.begin() + first, rows_.begin() + last + 1);
        endRemoveRows();
        end = begin;
    }
}

void HoldStatsModel::setScrapedHistogram(const QByteArray& name, std::vector<double> upperBounds,
                                         std::vector<double> cumulativeCounts, double sum, double count) {
    const std::int64_t key = pglock::key_of(std::string_view(name.constData(), static_cast<std::size_t>(name.size())));
    const int row = ensureRow(bigintLockId(key), key);
    LockStats& s = *rows_[static_cast<std::size_t>(row)];
    Scraped scraped;
    scraped.buckets = perBucketFromCumulative(upperBounds, cumulativeCounts, count);
    scraped.sum = std::isfinite(sum) ? sum : 0;
    scraped.count = std::isfinite(count) ? count : 0;
    s.scraped = scraped;
    s.scrapedName = name;
    s.label = labelOf(s);
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void HoldStatsModel::clearScrapedHistograms() {
    // From the back, so that the rows still to visit keep their numbers.
    for (int row = rowCount() - 1; row >= 0; --row) {
        LockStats& s = *rows_[static_cast<std::size_t>(row)];
        if (!s.scraped) continue;
        if (s.count == 0) {
            beginRemoveRows({}, row, row);
            rows_.erase(rows_.begin() + row);
            endRemoveRows();
            continue;
        }
        s.scraped.reset();
        s.scrapedName.clear();
        s.label = labelOf(s);
        emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    }
}

void HoldStatsModel::clear() {
    beginResetModel();
    rows_.clear();
    evicted_ = {};
    endResetModel();
}

void HoldStatsModel::setNamer(LockNamer namer) {
    namer_ = std::move(namer);
    refreshNames();
}

void HoldStatsModel::refreshNames() {
    for (auto& s : rows_) s->label = labelOf(*s);
    if (!rows_.empty()) emit dataChanged(index(0, Name), index(rowCount() - 1, Name));
}

void HoldStatsModel::relabel(const std::vector<std::int64_t>& keys) {
    for (std::int64_t key : keys) {
        const int row = rowOfLock(bigintLockId(key));
        if (row < 0) continue;
        LockStats& s = *rows_[static_cast<std::size_t>(row)];
        QString label = labelOf(s);
        if (label == s.label) continue;
        s.label = std::move(label);
        emit dataChanged(index(row, Name), index(row, Name));
    }
}

QString HoldStatsModel::labelOf(const LockStats& s) const {
    // The applications reported this very name: it is the truth for that key, catalog or not.
    if (s.scraped) return names::printable(s.scrapedName);
    return lockLabel(s.id, s.key, namer_);
}

BucketCounts HoldStatsModel::observedTotal() const {
    BucketCounts total = evicted_;
    for (const auto& s : rows_)
        for (std::size_t i = 0; i < kBucketCount; ++i) total[i] += s->observed[i];
    return total;
}

BucketCounts HoldStatsModel::scrapedTotal() const {
    BucketCounts total{};
    for (const auto& s : rows_)
        if (s->scraped)
            for (std::size_t i = 0; i < kBucketCount; ++i) total[i] += s->scraped->buckets[i];
    return total;
}

bool HoldStatsModel::hasScraped() const {
    return std::any_of(rows_.begin(), rows_.end(), [](const auto& s) { return s->scraped.has_value(); });
}

int HoldStatsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int HoldStatsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant HoldStatsModel::cell(const LockStats& s, int column) const {
    const auto quantile = [&s](double q) -> QVariant {
        if (auto v = estimateQuantile(s.observed, q)) return formatSeconds(*v);
        return {};
    };
    switch (column) {
        case Name: return s.label;
        case Key: return QString::number(s.key);
        case Count: return static_cast<qulonglong>(s.count);
        case TotalSeconds: return s.count > 0 ? QVariant(formatSeconds(s.sum)) : QVariant();
        case MaxSeconds: return s.count > 0 ? QVariant(formatSeconds(s.max)) : QVariant();
        case P50: return quantile(0.5);
        case P90: return quantile(0.9);
        case P99: return quantile(0.99);
        case ScrapedCount: return s.scraped ? QVariant(s.scraped->count) : QVariant();
        default: return static_cast<qulonglong>(s.observed[static_cast<std::size_t>(column - FirstBucket)]);
    }
}

QVariant HoldStatsModel::sortValue(const LockStats& s, int column) const {
    switch (column) {
        case Name: return s.label;
        case Key: return static_cast<qlonglong>(s.key);
        case Count: return s.count;
        case TotalSeconds: return s.sum;
        case MaxSeconds: return s.max;
        case P50: return estimateQuantile(s.observed, 0.5).value_or(-1);
        case P90: return estimateQuantile(s.observed, 0.9).value_or(-1);
        case P99: return estimateQuantile(s.observed, 0.99).value_or(-1);
        case ScrapedCount: return s.scraped ? s.scraped->count : -1.0;
        default: return s.observed[static_cast<std::size_t>(column - FirstBucket)];
    }
}

QVariant HoldStatsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const LockStats& s = *rows_[static_cast<std::size_t>(index.row())];
    switch (role) {
        case Qt::DisplayRole: return cell(s, index.column());
        case Qt::ToolTipRole:
            if (index.column() == Name) return plainToolTip(QStringLiteral("%1\nkey %2").arg(s.label).arg(s.key));
            return {};
        case Qt::TextAlignmentRole:
            return index.column() == Name ? QVariant() : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
        case KeyRole: return static_cast<qlonglong>(s.key);
        case SortRole: return sortValue(s, index.column());
        case ScrapedBucketRole:
            if (index.column() >= FirstBucket && s.scraped)
                return s.scraped->buckets[static_cast<std::size_t>(index.column() - FirstBucket)];
            return {};
        default: return {};
    }
}

QVariant HoldStatsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount) return {};
    switch (section) {
        case Name: return tr("Lock");
        case Key: return tr("Key");
        case Count: return tr("Holds");
        case TotalSeconds: return tr("Total");
        case MaxSeconds: return tr("Longest");
        case P50: return tr("p50");
        case P90: return tr("p90");
        case P99: return tr("p99");
        case ScrapedCount: return tr("Reported");
        default: return bucketLabel(static_cast<std::size_t>(section - FirstBucket));
    }
}

}  // namespace lockscope::charts
