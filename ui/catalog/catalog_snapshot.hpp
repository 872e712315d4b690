// One immutable picture of the catalog, for the GUI thread to read without SQLite: every name in
// name-byte order with its derived key, the text the filter matches, its note, an index by key and
// the key collisions. Built on a worker (CatalogService) and shared as shared_ptr<const>: the list
// model, the filter jobs and the window's name cache all read the same one, and a change publishes
// a new one instead of editing it, so no reader ever needs a lock.
//
// Memory is linear in the names and small per name: strings are packed into one buffer per column
// (no per-name allocation), about 110 bytes per name of 30 bytes (1,000,000 names: ~110 MB).
#pragma once

#include <QByteArray>
#include <QList>
#include <QSet>
#include <QString>

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "pglock/key_collision.hpp"

namespace lockscope {

class CatalogStore;
struct CatalogEntry;

// Strings back to back in one buffer, each found by its offset.
class PackedStrings {
public:
    PackedStrings() : offsets_{0} {}
    void append(std::string_view s) {
        data_.append(s);
        offsets_.push_back(data_.size());
    }
    std::size_t size() const { return offsets_.size() - 1; }
    std::string_view at(std::size_t i) const { return std::string_view(data_).substr(offsets_[i], offsets_[i + 1] - offsets_[i]); }
    void shrink() {
        data_.shrink_to_fit();
        offsets_.shrink_to_fit();
    }
    std::size_t bytes() const { return data_.capacity() + offsets_.capacity() * sizeof(std::uint64_t); }

private:
    std::string data_;
    std::vector<std::uint64_t> offsets_;
};

class CatalogSnapshot {
public:
    // Reads the whole catalog through `store` (on the store's thread). nullptr when the read
    // failed (store.errorString() says why) or `stop` was requested.
    static std::shared_ptr<const CatalogSnapshot> load(const CatalogStore& store, std::stop_token stop = {});
    // From entries in any order (tests, tools).
    static std::shared_ptr<const CatalogSnapshot> fromEntries(std::vector<CatalogEntry> entries);

    std::size_t size() const { return keys_.size(); }
    QByteArray name(std::size_t row) const;
    std::string_view nameBytes(std::size_t row) const { return names_.at(row); }
    qint64 key(std::size_t row) const { return keys_[row]; }
    QString note(std::size_t row) const;
    // The name as the filter sees it: names::printable() case-folded, UTF-8.
    std::string_view folded(std::size_t row) const { return folded_.at(row); }
    // The row of this name, or -1 (rows are in name-byte order).
    std::ptrdiff_t rowOf(std::string_view name) const;
    // Every name with this key, ordered (as CatalogStore::namesForKey).
    QList<QByteArray> namesForKey(qint64 key) const;
    // Keys shared by two or more names, ordered by key, each with its names in order (as
    // CatalogStore::collisions()).
    const std::vector<pglock::KeyCollision>& collisions() const { return collisions_; }
    bool collides(qint64 key) const { return collidingKeys_.contains(key); }
    std::size_t memoryBytes() const;

    // What the filter matches a needle against: the needle case-folded, UTF-8.
    static std::string foldNeedle(const QString& needle);

private:
    class Builder;
    PackedStrings names_;
    PackedStrings folded_;
    PackedStrings notes_;
    std::vector<qint64> keys_;
    struct KeyRow {
        qint64 key;
        std::uint32_t row;
    };
    std::vector<KeyRow> byKey_;  // sorted by (key, row)
    std::vector<pglock::KeyCollision> collisions_;
    QSet<qint64> collidingKeys_;
};

using CatalogSnapshotPtr = std::shared_ptr<const CatalogSnapshot>;

}  // namespace lockscope
