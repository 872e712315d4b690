// "Export PNG…" for the charts: a widget rendered as it is on screen, written as a PNG.
#pragma once

#include <QString>

class QWidget;

namespace lockscope::charts {

// Renders `widget` (grab(), so it works offscreen too) and writes a PNG to `path`.
// False when the widget is empty or the file cannot be written.
bool writeWidgetPng(QWidget* widget, const QString& path);

// Asks for a file name (suggesting `suggestedName` in the user's pictures folder) and writes it;
// a failure is reported in a message box on `dialogParent`.
void exportPngInteractively(QWidget* widget, QWidget* dialogParent, const QString& suggestedName);

}  // namespace lockscope::charts
