#include "catalog/catalog_list_model.hpp"

#include <QColor>

#include <algorithm>
#include <optional>

#include "catalog/background_priority.hpp"
#include "stores/name_import.hpp"

namespace lockscope {

namespace {

// Every row of `snapshot` (or of `base`) whose folded name contains `needle`; nullopt when stopped.
std::optional<std::vector<std::uint32_t>> matchingRows(const CatalogSnapshot& snapshot, const std::string& needle,
                                                const std::vector<std::uint32_t>* base, std::stop_token stop) {
    std::vector<std::uint32_t> out;
    const std::size_t n = base ? base->size() : snapshot.size();
    for (std::size_t i = 0; i < n; ++i) {
        if ((i & 0x3fff) == 0 && stop.stop_requested()) return std::nullopt;
        const auto row = base ? (*base)[i] : std::uint32_t(i);
        if (snapshot.folded(row).find(needle) != std::string_view::npos) out.push_back(row);
    }
    out.shrink_to_fit();
    return out;
}

}  // namespace

CatalogListModel::CatalogListModel(QObject* parent) : QAbstractTableModel(parent) {
    pool_.setMaxThreadCount(1);
    pool_.setObjectName(QStringLiteral("catalog filter"));
}

CatalogListModel::~CatalogListModel() {
    stop_.request_stop();
    pool_.waitForDone();  // no job may call back into a destroyed model
}

void CatalogListModel::setSnapshot(CatalogSnapshotPtr snapshot) {
    latest_ = std::move(snapshot);
    refilter();
}

void CatalogListModel::setFilter(const QString& text) {
    if (text == filter_) return;
    filter_ = text;
    refilter();
}

void CatalogListModel::refilter() {
    stop_.request_stop();  // the job for the previous keystroke is stale
    stop_ = std::stop_source();
    const quint64 generation = ++generation_;
    CatalogSnapshotPtr snapshot = latest_;
    std::string needle = CatalogSnapshot::foldNeedle(filter_);
    if (!snapshot || needle.empty()) {  // nothing to search: applied at once
        pending_ = 0;
        apply(generation, snapshot, needle, nullptr);
        return;
    }
    // A refinement of what is shown searches only the rows shown.
    Rows base;
    if (snapshot == shown_ && !shownNeedle_.empty() && needle.find(shownNeedle_) != std::string::npos) base = rows_;
    pending_ = generation;
    const std::stop_token stop = stop_.get_token();
    pool_.start([this, generation, snapshot = std::move(snapshot), needle = std::move(needle), base = std::move(base), stop] {
        lowerThisThreadsPriority();  // the pool's one thread: typing keeps the CPU first
        auto rows = matchingRows(*snapshot, needle, base.get(), stop);
        if (!rows) return;
        // Every row searched matched ("j" when every name has "job"): the very rows searched, so
        // that apply() sees nothing changed and spares the view a reset of a million rows.
        const bool all = rows->size() == (base ? base->size() : snapshot->size());
        Rows shared = all ? base : std::make_shared<const std::vector<std::uint32_t>>(std::move(*rows));
        // The destructor waits for this job, so `this` is alive here; the call itself is dropped
        // if the model is gone by the time it would run.
        QMetaObject::invokeMethod(
            this, [this, generation, snapshot, needle, shared] { apply(generation, snapshot, needle, shared); },
            Qt::QueuedConnection);
    });
}

void CatalogListModel::apply(quint64 generation, const CatalogSnapshotPtr& snapshot, const std::string& needle, Rows rows) {
    if (generation != generation_) return;  // a newer keystroke or snapshot is on its way
    pending_ = 0;
    if (snapshot == shown_ && rows == rows_) {  // the same rows: nothing for the view to do
        shownNeedle_ = needle;
        emit filterApplied();
        return;
    }
    beginResetModel();
    shown_ = snapshot;
    shownNeedle_ = needle;
    rows_ = std::move(rows);
    endResetModel();
    emit filterApplied();
}

QByteArray CatalogListModel::nameAt(int row) const {
    if (!shown_ || row < 0 || row >= rowCount()) return {};
    return shown_->name(snapshotRow(row));
}

int CatalogListModel::rowOfName(const QByteArray& name) const {
    if (!shown_) return -1;
    const std::ptrdiff_t row = shown_->rowOf(std::string_view(name.constData(), std::size_t(name.size())));
    if (row < 0) return -1;
    if (!rows_) return int(row);
    const auto it = std::lower_bound(rows_->begin(), rows_->end(), std::uint32_t(row));
    return it != rows_->end() && *it == std::uint32_t(row) ? int(it - rows_->begin()) : -1;
}

int CatalogListModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !shown_) return 0;
    return int(rows_ ? rows_->size() : shown_->size());
}

int CatalogListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CatalogListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const std::size_t row = snapshotRow(index.row());
    const qint64 key = shown_->key(row);
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                // Names are bytes: shown as the rest of the app shows them (escaped, never obeyed).
                case Name: {
                    const std::string_view bytes = shown_->nameBytes(row);
                    return names::printable(QByteArrayView(bytes.data(), qsizetype(bytes.size())));
                }
                case Key: return QString::number(key);
                case Note: return shown_->note(row);
                default: return {};
            }
        case NameBytesRole: return shown_->name(row);
        case Qt::ToolTipRole:
            if (index.column() == Name && shown_->collides(key))
                return tr("Another name in the catalog has the same key: they would share one lock.");
            return {};
        case Qt::ForegroundRole:
            if (index.column() == Name && shown_->collides(key)) return QColor(0xb0, 0x00, 0x20);
            return {};
        default: return {};
    }
}

QVariant CatalogListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Name: return tr("Name");
        case Key: return tr("Key");
        case Note: return tr("Note");
        default: return {};
    }
}

}  // namespace lockscope
