#include "stores/app_settings.hpp"

#include <QSettings>

namespace lockscope {

namespace {

double positive(const QSettings& s, const char* key, double fallback) {
    bool ok = false;
    const double value = s.value(QString::fromLatin1(key)).toDouble(&ok);
    return ok && value > 0 ? value : fallback;
}

}  // namespace

AppSettings AppSettings::load() {
    const QSettings s;
    AppSettings out;
    out.longWaitSeconds = positive(s, "settings/longWaitSeconds", out.longWaitSeconds);
    out.longHoldSeconds = positive(s, "settings/longHoldSeconds", out.longHoldSeconds);
    out.idleInTransactionSeconds = positive(s, "settings/idleInTransactionSeconds", out.idleInTransactionSeconds);
    out.pollIntervalSeconds = positive(s, "settings/pollIntervalSeconds", out.pollIntervalSeconds);
    out.theme = theme::modeFromString(s.value(QStringLiteral("settings/theme")).toString()).value_or(out.theme);
    return out;
}

void AppSettings::save() const {
    QSettings s;
    s.setValue(QStringLiteral("settings/longWaitSeconds"), longWaitSeconds);
    s.setValue(QStringLiteral("settings/longHoldSeconds"), longHoldSeconds);
    s.setValue(QStringLiteral("settings/idleInTransactionSeconds"), idleInTransactionSeconds);
    s.setValue(QStringLiteral("settings/pollIntervalSeconds"), pollIntervalSeconds);
    s.setValue(QStringLiteral("settings/theme"), theme::toString(theme));
}

}  // namespace lockscope
