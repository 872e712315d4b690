#include "charts/png_export.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QImage>
#include <QMessageBox>
#include <QPixmap>
#include <QStandardPaths>
#include <QWidget>

#include "widgets/plain_message_box.hpp"

namespace lockscope::charts {

bool writeWidgetPng(QWidget* widget, const QString& path) {
    if (!widget || path.isEmpty()) return false;
    // A refresh just before the export posts layout requests (axis labels, legend, text):
    // deliver them so the image shows the laid-out chart, not the previous layout.
    QCoreApplication::sendPostedEvents();
    const QPixmap pixmap = widget->grab();
    if (pixmap.isNull()) return false;
    return pixmap.save(path, "PNG");
}

void exportPngInteractively(QWidget* widget, QWidget* dialogParent, const QString& suggestedName) {
    QString dir = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    if (dir.isEmpty()) dir = QDir::homePath();
    QString path = QFileDialog::getSaveFileName(dialogParent, QObject::tr("Export PNG"),
                                                QDir(dir).filePath(suggestedName), QObject::tr("PNG images (*.png)"));
    if (path.isEmpty()) return;
    if (!path.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive)) path += QStringLiteral(".png");
    if (!writeWidgetPng(widget, path))
        showPlainMessage(dialogParent, QMessageBox::Warning, QObject::tr("Export PNG"), QObject::tr("Could not write %1.").arg(path));
}

}  // namespace lockscope::charts
