// The history tab: every hold and wait the monitor recorded for the current profile, searchable
// (name, application, user; kind; time window; pid), with "showing N of M", a CSV export of all
// matching rows and the profile's retention. It runs no SQL itself: queries and exports go
// through HistoryModel (off the GUI thread), settings through the HistoryRecorder.
//
// Embedding: `new HistoryPanel(&recorder, parent)`; it follows the recorder's opened() file and
// refreshes after each written() batch while visible.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;
class QTimer;

namespace lockscope::history {

class HistoryModel;
class HistoryRecorder;

class HistoryPanel : public QWidget {
    Q_OBJECT
public:
    explicit HistoryPanel(HistoryRecorder* recorder, QWidget* parent = nullptr);

    HistoryModel* model() const { return model_; }
    // Starts an export of the current filter to `path` (the button asks for a path first).
    void exportTo(const QString& path);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void applyFilter();
    void onRecorderOpened(const QString& path, bool ok, const QString& error);
    void onWritten();
    void onRefreshed(int shown, qint64 total, const QString& error);
    void askExport();

    HistoryRecorder* recorder_;
    HistoryModel* model_;
    QSortFilterProxyModel* proxy_;
    QLineEdit* search_;
    QComboBox* kind_;
    QComboBox* window_;
    QLineEdit* pid_;
    QTableView* table_;
    QPushButton* export_;
    QSpinBox* retention_;
    QLabel* status_;
    QTimer* searchDelay_;
    QTimer* retentionDelay_;  // arrow clicks settle before the file's retention changes
    bool stale_ = false;  // rows were written while hidden
    QString exportMessage_;
};

}  // namespace lockscope::history
