// The operator's list of known lock names: add, remove, rename, import a list, scan a source
// tree (on a worker thread, with progress), export. Keys are always derived, never typed.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include "stores/catalog_store.hpp"
#include "source_scan/source_scanner.hpp"

class QLabel;
class QLineEdit;
class QTableWidget;

namespace lockscope {


class CatalogPanel : public QWidget {
    Q_OBJECT
public:
    explicit CatalogPanel(CatalogStore& store, QWidget* parent = nullptr);

signals:
    // "Take lock…" pressed with a name selected.
    void takeLockRequested(const QByteArray& name);

private:
    void reload();
    void addName();
    void removeSelected();
    void renameSelected();
    void importList();
    void scanTree();
    void exportList();
    void report(const QString& what, const ImportReport& report);
    QByteArray selectedName() const;

    CatalogStore& store_;
    QLineEdit* filter_;
    QTableWidget* table_;
    QLabel* status_;
    QLabel* collisionWarning_;  // shown while two names in the catalog share a key
    QFutureWatcher<scan::TreeScan> scanWatcher_;
};

}  // namespace lockscope
