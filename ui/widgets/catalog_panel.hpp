// The operator's list of known lock names: add, remove, rename, import a list, scan a source
// tree, export. Keys are always derived, never typed. Nothing here touches SQLite or a file: the
// list is a CatalogListModel over CatalogService's snapshot (filtered off the GUI thread), every
// change is a job of the service. An import or export shows a progress bar with Cancel, a write
// in flight shows "saving…", and a failed job offers Retry.
#pragma once

#include <QFutureWatcher>
#include <QHash>
#include <QSet>
#include <QWidget>

#include <functional>

#include "catalog/catalog_service.hpp"
#include "source_scan/source_scanner.hpp"

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableView;

namespace lockscope {

class CatalogListModel;

class CatalogPanel : public QWidget {
    Q_OBJECT
public:
    explicit CatalogPanel(CatalogService& service, QWidget* parent = nullptr);

    CatalogListModel& model() { return *model_; }
    QByteArray selectedName() const;

signals:
    // "Take lock…" pressed with a name selected.
    void takeLockRequested(const QByteArray& name);

private:
    void onSnapshot(const CatalogSnapshotPtr& snapshot);
    void onFinished(const CatalogService::Result& result);
    void onProgress(quint64 id, qint64 done, qint64 total);
    void showCount();
    void addName();
    void removeSelected();
    void renameSelected();
    void importList();
    void scanTree();
    void exportList();
    // Posts a job through `start` (which returns its id), remembering it for Retry.
    void run(const std::function<quint64()>& start, bool long_);
    void failed(const QString& message);
    void report(const QString& what, const ImportReport& report);
    void setLongJob(quint64 id);

    CatalogService& service_;
    CatalogListModel* model_;
    QLineEdit* filter_;
    QTableView* table_;
    QLabel* count_;   // how many names, how many shown
    QLabel* status_;  // what the last job did
    QLabel* saving_;
    QPushButton* retry_;
    QProgressBar* progress_;
    QPushButton* cancel_;
    QLabel* collisionWarning_;  // shown while two names in the catalog share a key
    QList<QPushButton*> longJobButtons_;  // import, scan, export: one long job at a time
    QFutureWatcher<scan::TreeScan> scanWatcher_;
    QString scanDir_;
    QSet<quint64> mine_;                                 // jobs this panel posted
    QHash<quint64, std::function<quint64()>> retries_;   // how to post each again
    std::function<quint64()> retryLast_;
    quint64 longJob_ = 0;
    QByteArray keepSelected_;  // across a refilter
};

}  // namespace lockscope
