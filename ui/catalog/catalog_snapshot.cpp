#include "catalog/catalog_snapshot.hpp"

#include <algorithm>
#include <numeric>

#include "stores/catalog_store.hpp"
#include "stores/name_import.hpp"

namespace lockscope {

// Appends rows, then derives the key index and the collisions once every name is in.
class CatalogSnapshot::Builder {
public:
    Builder() : snapshot_(std::make_shared<CatalogSnapshot>()) {}

    void add(std::string_view name, qint64 key, const QString& note) {
        CatalogSnapshot& s = *snapshot_;
        s.names_.append(name);
        s.keys_.push_back(key);
        const QByteArray folded = names::printable(QByteArrayView(name.data(), qsizetype(name.size()))).toCaseFolded().toUtf8();
        s.folded_.append(std::string_view(folded.constData(), std::size_t(folded.size())));
        const QByteArray noteBytes = note.toUtf8();
        s.notes_.append(std::string_view(noteBytes.constData(), std::size_t(noteBytes.size())));
    }

    std::shared_ptr<const CatalogSnapshot> finish() {
        const CatalogSnapshot& s = *snapshot_;
        // SQLite orders BLOBs bytewise, as rowOf() searches; a name another writer stored as TEXT
        // sorts before every BLOB, so the order is checked, never assumed.
        std::vector<std::uint32_t> order(s.size());
        std::iota(order.begin(), order.end(), 0u);
        const auto byName = [&s](std::uint32_t a, std::uint32_t b) { return s.names_.at(a) < s.names_.at(b); };
        if (!std::is_sorted(order.begin(), order.end(), byName)) {
            std::sort(order.begin(), order.end(), byName);
            Builder sorted;
            for (const std::uint32_t row : order) sorted.add(s.names_.at(row), s.keys_[row], s.note(row));
            return sorted.finish();
        }
        CatalogSnapshot& out = *snapshot_;
        out.names_.shrink();
        out.folded_.shrink();
        out.notes_.shrink();
        out.keys_.shrink_to_fit();
        out.byKey_.reserve(out.size());
        for (std::uint32_t row = 0; row < out.size(); ++row) out.byKey_.push_back({out.keys_[row], row});
        std::sort(out.byKey_.begin(), out.byKey_.end(),
                  [](const KeyRow& a, const KeyRow& b) { return a.key != b.key ? a.key < b.key : a.row < b.row; });
        // Only keys seen twice can collide; pglock's own check decides over those few.
        std::vector<pglock::NamedKey> candidates;
        for (std::size_t i = 0; i < out.byKey_.size(); ++i) {
            const bool shared = (i > 0 && out.byKey_[i - 1].key == out.byKey_[i].key) ||
                                (i + 1 < out.byKey_.size() && out.byKey_[i + 1].key == out.byKey_[i].key);
            if (shared) candidates.push_back({std::string(out.names_.at(out.byKey_[i].row)), out.byKey_[i].key});
        }
        out.collisions_ = pglock::find_key_collisions(candidates);
        for (const pglock::KeyCollision& c : out.collisions_) out.collidingKeys_.insert(c.key);
        return std::move(snapshot_);
    }

private:
    std::shared_ptr<CatalogSnapshot> snapshot_;
};

std::shared_ptr<const CatalogSnapshot> CatalogSnapshot::load(const CatalogStore& store, std::stop_token stop) {
    Builder builder;
    const bool ok = store.visitEntries(
        [&builder](const CatalogEntry& e) {
            builder.add(std::string_view(e.name.constData(), std::size_t(e.name.size())), e.key, e.note);
        },
        stop);
    if (!ok) return nullptr;
    return builder.finish();
}

std::shared_ptr<const CatalogSnapshot> CatalogSnapshot::fromEntries(std::vector<CatalogEntry> entries) {
    Builder builder;
    for (const CatalogEntry& e : entries) builder.add(std::string_view(e.name.constData(), std::size_t(e.name.size())), e.key, e.note);
    return builder.finish();
}

QByteArray CatalogSnapshot::name(std::size_t row) const {
    const std::string_view bytes = names_.at(row);
    return QByteArray(bytes.data(), qsizetype(bytes.size()));
}

QString CatalogSnapshot::note(std::size_t row) const {
    const std::string_view bytes = notes_.at(row);
    return QString::fromUtf8(bytes.data(), qsizetype(bytes.size()));
}

std::ptrdiff_t CatalogSnapshot::rowOf(std::string_view name) const {
    std::size_t lo = 0, hi = size();
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (names_.at(mid) < name) lo = mid + 1;
        else hi = mid;
    }
    return lo < size() && names_.at(lo) == name ? std::ptrdiff_t(lo) : -1;
}

QList<QByteArray> CatalogSnapshot::namesForKey(qint64 key) const {
    QList<QByteArray> out;
    auto it = std::lower_bound(byKey_.begin(), byKey_.end(), key, [](const KeyRow& r, qint64 k) { return r.key < k; });
    for (; it != byKey_.end() && it->key == key; ++it) out.append(name(it->row));  // rows ascend: names in order
    return out;
}

std::size_t CatalogSnapshot::memoryBytes() const {
    return sizeof(*this) + names_.bytes() + folded_.bytes() + notes_.bytes() + keys_.capacity() * sizeof(qint64) +
           byKey_.capacity() * sizeof(KeyRow);
}

std::string CatalogSnapshot::foldNeedle(const QString& needle) { return needle.toCaseFolded().toStdString(); }

}  // namespace lockscope
