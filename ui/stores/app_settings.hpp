// The operator's preferences, kept in QSettings beside the connection profiles: thresholds of
// what is highlighted, the poll interval to start with, and the theme. (History retention lives
// in each server's history file: see history::HistoryRecorder::setRetentionDays.)
#pragma once

#include "theme/app_palette.hpp"

namespace lockscope {

struct AppSettings {
    double longWaitSeconds = 5.0;
    double longHoldSeconds = 60.0;
    double idleInTransactionSeconds = 30.0;
    double pollIntervalSeconds = 1.0;
    theme::Mode theme = theme::Mode::system;

    // Missing or unreadable values keep their defaults.
    static AppSettings load();
    void save() const;
    bool operator==(const AppSettings&) const = default;
};

}  // namespace lockscope
