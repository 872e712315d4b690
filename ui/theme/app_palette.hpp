// Every colour lockscope draws itself comes from here, so that each one reads on the light and
// the dark palette alike. The theme follows the platform's palette (Qt 6.4 has no colour-scheme
// hint: dark is a palette whose base is dark); light or dark can be forced, e.g. for screenshots.
#pragma once

#include <QColor>
#include <QIcon>
#include <QString>

#include <optional>

namespace lockscope::theme {

enum class Mode { system, light, dark };

// "system", "light" or "dark"; nullopt for anything else.
std::optional<Mode> modeFromString(const QString& text);
QString toString(Mode mode);
// The mode asked for by LOCKSCOPE_THEME, if it names one.
std::optional<Mode> modeFromEnvironment();

// Applies `mode` to the application: light and dark are Fusion with a fixed palette, system is
// the platform's own style and palette (as found before the first apply()). These two are in the
// widgets library (app_style.cpp): they set the widget style; the colours below need no widget.
void apply(Mode mode);
Mode current();

// The palette in use is a dark one.
bool isDark();

enum class Tint {
    attention,  // over a threshold: idle in transaction, a long hold or wait, a pinned xmin
    contended,  // a lock with sessions waiting for it
};
QColor background(Tint tint);
QColor foreground(Tint tint);
QColor staleText();     // rows of a poll that failed since
QColor inactiveText();  // things no longer in effect: a lock this app released
QColor errorText();     // "disconnected" and other errors in labels

// The charts' own inks, each readable on the palette's Base in both themes.
enum class ChartInk {
    exclusive,      // a finished exclusive hold
    shared,         // a finished shared hold
    heldExclusive,  // an exclusive hold still held
    heldShared,     // a shared hold still held
    waiters,        // the waiting sessions line
    monitor,        // what the monitor saw (histogram)
    applications,   // what the applications' /metrics report (histogram)
    grid,           // grid lines: a faint mix of Text into Base
    axisLine,       // axis lines: a stronger mix
};
QColor chartInk(ChartInk ink);
// Every other lane's background: a faint shade of the text colour over Base.
QColor laneStripe();

// A small clock: "sessions are waiting", beside the colour (never colour alone).
QIcon waitersIcon();
// The marker of a lock whose holder is probably orphaned: a warning triangle.
QIcon orphanIcon();

}  // namespace lockscope::theme
