#include "theme/app_palette.hpp"

#include <QApplication>
#include <QPainter>
#include <QPalette>
#include <QPixmap>
#include <QStyle>
#include <QStyleFactory>

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

std::optional<Mode> modeFromString(const QString& text) {
    if (text == QLatin1String("system")) return Mode::system;
    if (text == QLatin1String("light")) return Mode::light;
    if (text == QLatin1String("dark")) return Mode::dark;
    return std::nullopt;
}

QString toString(Mode mode) {
    switch (mode) {
    case Mode::light: return QStringLiteral("light");
    case Mode::dark: return QStringLiteral("dark");
    case Mode::system: break;
    }
    return QStringLiteral("system");
}

std::optional<Mode> modeFromEnvironment() { return modeFromString(qEnvironmentVariable("LOCKSCOPE_THEME")); }

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

bool isDark() { return QGuiApplication::palette().color(QPalette::Base).lightness() < 128; }

QColor background(Tint tint) {
    const bool dark = isDark();
    switch (tint) {
    case Tint::attention: return dark ? QColor(110, 80, 10) : QColor(255, 213, 128);
    case Tint::contended: return dark ? QColor(120, 40, 48) : QColor(255, 190, 190);
    }
    return {};
}

QColor foreground(Tint) { return isDark() ? QColor(250, 250, 250) : QColor(Qt::black); }

// Dimmer than the text, still readable (contrast >= 4.5 on the base colours): the palette's
// disabled grey is not (1.9 on Fusion's white).
QColor staleText() { return isDark() ? QColor(150, 150, 150) : QColor(112, 112, 112); }

QColor inactiveText() { return staleText(); }

QColor errorText() { return isDark() ? QColor(255, 120, 120) : QColor(176, 0, 32); }

namespace {

// Text over Base at this share: lines that read on either palette without a colour of their own.
QColor mix(double share) {
    const QPalette p = QGuiApplication::palette();
    const QColor base = p.color(QPalette::Base), text = p.color(QPalette::Text);
    const auto channel = [share](int b, int t) { return static_cast<int>(b + (t - b) * share + 0.5); };
    return {channel(base.red(), text.red()), channel(base.green(), text.green()), channel(base.blue(), text.blue())};
}

}  // namespace

QColor chartInk(ChartInk ink) {
    // Tango's mid tones on light; on dark their light tones, which keep the contrast on a dark Base.
    const bool dark = isDark();
    switch (ink) {
    case ChartInk::exclusive: return dark ? QColor(114, 159, 207) : QColor(52, 101, 164);
    case ChartInk::shared: return dark ? QColor(138, 226, 52) : QColor(78, 154, 6);
    case ChartInk::heldExclusive: return dark ? QColor(252, 175, 62) : QColor(206, 92, 0);
    case ChartInk::heldShared: return dark ? QColor(252, 233, 79) : QColor(237, 170, 0);
    case ChartInk::waiters: return dark ? QColor(239, 41, 41) : QColor(164, 0, 0);
    case ChartInk::monitor: return dark ? QColor(114, 159, 207) : QColor(52, 101, 164);
    case ChartInk::applications: return dark ? QColor(138, 226, 52) : QColor(78, 154, 6);
    case ChartInk::grid: return mix(0.15);
    case ChartInk::axisLine: return mix(0.45);
    }
    return {};
}

QColor laneStripe() {
    QColor c = QGuiApplication::palette().color(QPalette::Text);
    c.setAlpha(isDark() ? 18 : 10);
    return c;
}

QIcon waitersIcon() {
    QPixmap pixmap(16, 16);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    const QColor ink = isDark() ? QColor(255, 140, 140) : QColor(170, 20, 30);
    p.setPen(QPen(ink, 1.6));
    p.setBrush(Qt::NoBrush);
    p.drawEllipse(QRectF(1.5, 1.5, 13, 13));
    p.drawLine(QPointF(8, 8), QPointF(8, 4));
    p.drawLine(QPointF(8, 8), QPointF(11, 9.5));
    return QIcon(pixmap);
}

}  // namespace lockscope::theme
