// theme::apply() and current() (declared in app_palette.hpp): they set the application's widget
// style, so they live in the widgets library; the colours stay with the models, which need no
// widget to pick them.
#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

#include <optional>

#include "theme/app_palette.hpp"

namespace lockscope::theme {

namespace {

Mode current_ = Mode::system;

// The platform's style and palette, remembered at the first apply() to go back to them.
struct Platform {
    QString style;
    QPalette palette;
};
std::optional<Platform>& platform() {
    static std::optional<Platform> p;
    return p;
}

QPalette darkPalette() {
    QPalette p;
    const QColor window(45, 45, 48), base(30, 30, 32), text(230, 230, 230), disabled(128, 128, 128);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(40, 40, 43));
    p.setColor(QPalette::ToolTipBase, QColor(60, 60, 64));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(255, 90, 90));
    p.setColor(QPalette::Light, QColor(70, 70, 74));
    p.setColor(QPalette::Midlight, QColor(58, 58, 62));
    p.setColor(QPalette::Mid, QColor(38, 38, 40));
    p.setColor(QPalette::Dark, QColor(22, 22, 24));
    p.setColor(QPalette::Shadow, Qt::black);
    p.setColor(QPalette::Link, QColor(110, 170, 255));
    p.setColor(QPalette::Highlight, QColor(45, 110, 200));
    p.setColor(QPalette::HighlightedText, Qt::white);
    for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

}  // namespace

void apply(Mode mode) {
    if (!platform()) platform() = Platform{QApplication::style()->name(), QApplication::palette()};
    current_ = mode;
    if (mode == Mode::system) {
        QApplication::setStyle(QStyleFactory::create(platform()->style));
        QApplication::setPalette(platform()->palette);
        return;
    }
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(mode == Mode::dark ? darkPalette() : QApplication::style()->standardPalette());
}

Mode current() { return current_; }

}  // namespace lockscope::theme
