#include "screenshot.hpp"

#include <QApplication>
#include <QDialog>
#include <QElapsedTimer>
#include <QPainter>
#include <QPixmap>
#include <QTimer>
#include <QTreeView>

#include <cstdio>
#include <memory>
#include <optional>

#include "widgets/main_window.hpp"

namespace lockscope {

namespace {

// The first lock whose name contains `text` (any lock when empty) that has waiters; with
// `withWaiters` false, also one without.
std::optional<QModelIndex> findLock(const QAbstractItemModel& model, const QString& text, bool withWaiters) {
    for (const bool waiting : {true, false}) {
        if (!waiting && withWaiters) break;
        for (int row = 0; row < model.rowCount(); ++row) {
            const QModelIndex index = model.index(row, 0);
            if ((text.isEmpty() || index.data().toString().contains(text)) && (!waiting || model.rowCount(index) > 0)) return index;
        }
    }
    return std::nullopt;
}

// The window with every visible dialog drawn over it at its place (a window grab has only the
// window), framed, since an offscreen dialog has no decoration of its own.
QPixmap grabWithDialogs(MainWindow& window) {
    QPixmap shot = window.grab();
    QPainter painter(&shot);
    for (QWidget* top : QApplication::topLevelWidgets()) {
        auto* dialog = qobject_cast<QDialog*>(top);
        if (!dialog || !dialog->isVisible()) continue;
        QPoint at = dialog->mapToGlobal(QPoint(0, 0)) - window.mapToGlobal(QPoint(0, 0));
        if (!window.rect().contains(QRect(at, dialog->size())))
            at = window.rect().center() - QPoint(dialog->width() / 2, dialog->height() / 2);
        painter.drawPixmap(at, dialog->grab());
        painter.setPen(window.palette().color(QPalette::Shadow));
        painter.drawRect(QRect(at, dialog->size()).adjusted(-1, -1, 0, 0));
    }
    return shot;
}

void shoot(MainWindow& window, const QString& file) {
    QApplication::processEvents();
    const bool saved = grabWithDialogs(window).save(file, "PNG");
    if (!saved) std::fprintf(stderr, "lockscope: could not write %s\n", qPrintable(file));
    QApplication::exit(saved ? 0 : 1);
}

}  // namespace

void armScreenshot(MainWindow& window, const ScreenshotRequest& request) {
    QTimer::singleShot(request.delayMs, &window, [&window, request] {
        QTreeView& view = window.locksView();
        // Checked every 100 ms until the lock is there or kSelectWaitMs have passed.
        auto* retry = new QTimer(&window);
        auto waited = std::make_shared<QElapsedTimer>();
        waited->start();
        retry->setInterval(100);
        const auto attempt = [&window, &view, request, retry, waited] {
            // A chosen lock is shown at a moment it has waiters, if one comes within the wait.
            const bool waitMore = !request.select.isEmpty() && waited->elapsed() < ScreenshotRequest::kSelectWaitMs;
            const auto pick = findLock(*view.model(), request.select, waitMore);
            if (!pick && waitMore) return;
            retry->stop();
            if (!pick && !request.select.isEmpty()) {
                std::fprintf(stderr, "lockscope: --screenshot-select %s: no lock of that name showed up within %d s\n",
                             qPrintable(request.select), ScreenshotRequest::kSelectWaitMs / 1000);
                QApplication::exit(1);
                return;
            }
            view.expandAll();
            // Without --screenshot-select a row the user (or --tab) chose stays chosen.
            if (pick && (!request.select.isEmpty() || !view.currentIndex().isValid())) {
                view.setCurrentIndex(*pick);
                view.scrollTo(*pick);
            }
            shoot(window, request.file);
        };
        QObject::connect(retry, &QTimer::timeout, &window, attempt);
        retry->start();
        attempt();
    });
}

}  // namespace lockscope
