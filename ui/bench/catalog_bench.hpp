// lockscope --bench-catalog N: the catalog panel at scale, as an operator uses it. main prepares an
// N-name catalog first (a copy of a cached one, so every run starts alike), then this opens the
// Catalog tab, types a filter char by char and deletes it again, imports a list of N/10 new names,
// and prints the GUI event loop's stalls (p50, p99, max: a 5 ms probe timer, as --bench-seconds),
// the GUI thread's own CPU between ticks, the time to the first paint and to the loaded list,
// each keystroke's time to its filtered rows, the import's time, and RSS. No server is needed.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <vector>

#include "bench/bench_mode.hpp"

namespace lockscope {

class MainWindow;

class CatalogBench : public QObject {
    Q_OBJECT
public:
    struct Options {
        QString importFile;      // the list imported after the filter
        QString typed = QStringLiteral("job-12345");
        int keystrokeMs = 120;   // a fast typist
    };
    // `sinceStart` runs from the process's start: the first paint is timed from there.
    CatalogBench(MainWindow& window, Options options, const QElapsedTimer& sinceStart, QObject* parent = nullptr);
    void start();

    // Builds (or reuses) a catalog of n names at `cached` and copies it to `scratch`; writes the
    // list of n/10 new names to `importFile`. Setup before the window exists; false on an error.
    static bool prepare(qint64 n, const QString& cached, const QString& scratch, const QString& importFile, QString* error);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    enum class Phase { loading, filtering, importing, done };
    void onProbe();
    void nextKey();
    void finish();

    MainWindow& window_;
    Options options_;
    const QElapsedTimer& sinceStart_;
    QTimer probe_, keys_, deadline_;
    QElapsedTimer clock_;
    qint64 lastProbeNs_ = 0;
    double lastCpuMs_ = 0;
    Phase phase_ = Phase::loading;
    DelayHistogram stalls_[3], busy_[3];  // per phase
    double firstPaintMs_ = -1, loadedMs_ = -1, importStartMs_ = -1, importDoneMs_ = -1;
    int step_ = 0;                        // keystrokes sent
    double keySentMs_ = 0;
    std::vector<double> keyLatencyMs_;    // keystroke to its rows shown
    quint64 importJob_ = 0;
    bool importFinished_ = false;
    QString importOutcome_;
    long rssStart_ = -1, rssLoaded_ = -1;
};

}  // namespace lockscope
