// Settings: the thresholds of what the locks view and the summary highlight, the poll interval
// lockscope starts with, history retention and the theme. OK saves and applies at once.
#pragma once

#include <QDialog>

#include "stores/app_settings.hpp"

class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace lockscope {

class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    // retentionDays: the current server's history retention; 0 when no history file is open.
    SettingsDialog(const AppSettings& settings, int retentionDays, QWidget* parent = nullptr);

    AppSettings settings() const;
    int retentionDays() const;

private:
    QDoubleSpinBox* longWait_;
    QDoubleSpinBox* longHold_;
    QDoubleSpinBox* idle_;
    QDoubleSpinBox* interval_;
    QSpinBox* retention_;
    QComboBox* theme_;
};

}  // namespace lockscope
