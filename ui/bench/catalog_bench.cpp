#include "bench/catalog_bench.hpp"

#include <QApplication>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "catalog/catalog_list_model.hpp"
#include "catalog/catalog_service.hpp"
#include "stores/catalog_store.hpp"
#include "widgets/catalog_panel.hpp"
#include "widgets/main_window.hpp"

namespace lockscope {

namespace {

double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Names shaped like a real catalog's: a service prefix and a job number.
QByteArray benchName(qint64 i) { return "service-" + QByteArray::number(i % 97) + ".job-" + QByteArray::number(i); }

constexpr int kChunk = 100000;

}  // namespace

bool CatalogBench::prepare(qint64 n, const QString& cached, const QString& scratch, const QString& importFile, QString* error) {
    {
        CatalogStore store(cached);
        if (!store.isOpen()) {
            *error = store.errorString();
            return false;
        }
        for (qint64 have = store.count(); have < n;) {
            std::fprintf(stderr, "lockscope bench: preparing the catalog: %lld of %lld names\n", static_cast<long long>(have),
                         static_cast<long long>(n));
            QList<NameSource> chunk;
            for (qint64 i = have; i < std::min(n, have + kChunk); ++i) chunk.append({benchName(i), {}, 0});
            const ImportReport report = store.importSources(chunk);
            if (!report.ok()) {
                *error = report.errors.join(QStringLiteral("; "));
                return false;
            }
            have += chunk.size();
        }
    }
    QFile::remove(scratch);
    if (!QFile::copy(cached, scratch)) {
        *error = QStringLiteral("cannot copy %1 to %2").arg(cached, scratch);
        return false;
    }
    QFile list(importFile);
    if (!list.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        *error = list.errorString();
        return false;
    }
    for (qint64 i = 0; i < std::max<qint64>(1, n / 10); ++i) list.write("imported." + benchName(i) + '\n');
    return true;
}

CatalogBench::CatalogBench(MainWindow& window, Options options, const QElapsedTimer& sinceStart, QObject* parent)
    : QObject(parent), window_(window), options_(std::move(options)), sinceStart_(sinceStart) {
    probe_.setTimerType(Qt::PreciseTimer);
    probe_.setInterval(5);
    connect(&probe_, &QTimer::timeout, this, &CatalogBench::onProbe);
    keys_.setSingleShot(true);
    connect(&keys_, &QTimer::timeout, this, &CatalogBench::nextKey);
    deadline_.setSingleShot(true);
    connect(&deadline_, &QTimer::timeout, this, [this] {
        std::fprintf(stderr, "lockscope bench: gave up after 15 minutes\n");
        finish();
    });
    window_.installEventFilter(this);
    CatalogService& service = window_.catalogService();
    connect(&service, &CatalogService::snapshotChanged, this, [this] {
        if (phase_ == Phase::loading) {
            loadedMs_ = static_cast<double>(sinceStart_.nsecsElapsed()) / 1e6;
            rssLoaded_ = BenchMode::rssKiB();
            phase_ = Phase::filtering;
            window_.showTab(QStringLiteral("catalog"));
            keys_.start(500);  // the list painted once before the first key
        } else if (phase_ == Phase::importing && importFinished_) {
            importDoneMs_ = static_cast<double>(clock_.nsecsElapsed()) / 1e6;  // the new names are listed
            finish();
        }
    });
    connect(&service, &CatalogService::finished, this, [this](const CatalogService::Result& r) {
        if (r.id != importJob_) return;
        importFinished_ = true;
        importOutcome_ = r.ok ? QStringLiteral("%1 names added").arg(r.report.added) : r.error;
        if (!r.ok || r.report.added == 0) finish();
    });
    connect(&window_.catalogPanel().model(), &CatalogListModel::filterApplied, this, [this] {
        if (phase_ != Phase::filtering || step_ == 0) return;
        keyLatencyMs_.push_back(static_cast<double>(clock_.nsecsElapsed()) / 1e6 - keySentMs_);
    });
}

void CatalogBench::start() {
    rssStart_ = BenchMode::rssKiB();
    clock_.start();
    lastProbeNs_ = clock_.nsecsElapsed();
    lastCpuMs_ = threadCpuMs();
    probe_.start();
    deadline_.start(15 * 60 * 1000);
}

bool CatalogBench::eventFilter(QObject* watched, QEvent* event) {
    if (watched == &window_ && event->type() == QEvent::Paint && firstPaintMs_ < 0)
        firstPaintMs_ = static_cast<double>(sinceStart_.nsecsElapsed()) / 1e6;
    return QObject::eventFilter(watched, event);
}

void CatalogBench::onProbe() {
    const qint64 now = clock_.nsecsElapsed();
    const double late = static_cast<double>(now - lastProbeNs_) / 1e6 - 5.0;
    lastProbeNs_ = now;
    const double cpu = threadCpuMs();
    const int phase = std::min(static_cast<int>(phase_), 2);
    stalls_[phase].add(late);
    busy_[phase].add(cpu - lastCpuMs_);
    lastCpuMs_ = cpu;
}

// One keystroke: the typed text grows a char at a time, then shrinks to nothing, as a Backspace
// would; then the import starts.
void CatalogBench::nextKey() {
    auto* filter = window_.catalogPanel().findChild<QLineEdit*>(QStringLiteral("catalogFilter"));
    const auto n = static_cast<int>(options_.typed.size());
    if (step_ < 2 * n) {
        const int len = step_ < n ? step_ + 1 : 2 * n - step_ - 1;
        keySentMs_ = static_cast<double>(clock_.nsecsElapsed()) / 1e6;
        ++step_;
        filter->setText(options_.typed.left(len));
        keys_.start(options_.keystrokeMs);
        return;
    }
    phase_ = Phase::importing;
    importStartMs_ = static_cast<double>(clock_.nsecsElapsed()) / 1e6;
    importJob_ = window_.catalogService().importList(options_.importFile);
}

void CatalogBench::finish() {
    if (phase_ == Phase::done) return;
    phase_ = Phase::done;
    probe_.stop();
    deadline_.stop();
    const auto snapshot = window_.catalogService().snapshot();
    const char* names[] = {"loading", "filtering", "importing"};
    std::printf("lockscope bench-catalog: %zu names listed at the end\n", snapshot ? snapshot->size() : std::size_t(0));
    std::printf("first paint %.0f ms after start; the list loaded after %.0f ms\n", firstPaintMs_, loadedMs_);
    for (int p = 0; p < 3; ++p) {
        std::printf("%-9s event-loop stall p50 %.1f ms, p99 %.1f ms, max %.1f ms over %zu ticks; GUI-thread CPU max %.1f ms\n",
                    names[p], stalls_[p].quantile(0.5), stalls_[p].quantile(0.99), stalls_[p].max(), stalls_[p].count(),
                    busy_[p].max());
    }
    std::sort(keyLatencyMs_.begin(), keyLatencyMs_.end());
    if (!keyLatencyMs_.empty())
        std::printf("keystroke to filtered rows: median %.0f ms, max %.0f ms over %zu keystrokes\n",
                    keyLatencyMs_[keyLatencyMs_.size() / 2], keyLatencyMs_.back(), keyLatencyMs_.size());
    std::printf("import of %s: %s; listed %.0f ms after it started\n", qPrintable(QFileInfo(options_.importFile).fileName()),
                qPrintable(importOutcome_), importDoneMs_ < 0 ? -1.0 : importDoneMs_ - importStartMs_);
    std::printf("RSS: %ld KiB at start, %ld KiB with the list loaded, %ld KiB at the end; snapshot %.1f MB\n", rssStart_,
                rssLoaded_, BenchMode::rssKiB(), snapshot ? static_cast<double>(snapshot->memoryBytes()) / 1e6 : 0.0);
    std::fflush(stdout);
    QApplication::exit(importFinished_ && importDoneMs_ >= 0 ? 0 : 1);
}

}  // namespace lockscope
