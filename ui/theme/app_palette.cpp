#include "theme/app_palette.hpp"

#include <QGuiApplication>
#include <QPainter>
#include <QPalette>
#include <QPixmap>

namespace lockscope::theme {

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

QIcon orphanIcon() {
    QPixmap pixmap(16, 16);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    const QColor ink = isDark() ? QColor(255, 200, 90) : QColor(160, 90, 0);
    p.setPen(QPen(ink, 1.4));
    p.setBrush(Qt::NoBrush);
    p.drawPolygon(QPolygonF({QPointF(8, 1.5), QPointF(14.8, 14), QPointF(1.2, 14)}));
    p.drawLine(QPointF(8, 6), QPointF(8, 10));
    p.drawPoint(QPointF(8, 12.2));
    return QIcon(pixmap);
}

}  // namespace lockscope::theme
