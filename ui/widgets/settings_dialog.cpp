#include "widgets/settings_dialog.hpp"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSpinBox>

#include "history/history_store.hpp"

namespace lockscope {

namespace {

QDoubleSpinBox* seconds(QWidget* parent, const char* name, double min, double max, double value) {
    auto* box = new QDoubleSpinBox(parent);
    box->setObjectName(QString::fromLatin1(name));
    box->setRange(min, max);
    box->setDecimals(1);
    box->setSuffix(QDialog::tr(" s"));
    box->setValue(value);
    return box;
}

}  // namespace

SettingsDialog::SettingsDialog(const AppSettings& s, int retentionDays, QWidget* parent) : QDialog(parent) {
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings"));
    auto* form = new QFormLayout(this);
    longWait_ = seconds(this, "settingsLongWait", 0.5, 86400, s.longWaitSeconds);
    longHold_ = seconds(this, "settingsLongHold", 1, 7 * 86400, s.longHoldSeconds);
    idle_ = seconds(this, "settingsIdleInTransaction", 1, 86400, s.idleInTransactionSeconds);
    interval_ = seconds(this, "settingsPollInterval", 0.25, 60, s.pollIntervalSeconds);
    interval_->setDecimals(2);
    interval_->setSingleStep(0.25);
    retention_ = new QSpinBox(this);
    retention_->setObjectName(QStringLiteral("settingsRetention"));
    retention_->setRange(1, history::HistoryStore::kMaxRetentionDays);
    retention_->setSuffix(tr(" days"));
    retention_->setValue(retentionDays > 0 ? retentionDays : history::HistoryStore::kDefaultRetentionDays);
    retention_->setEnabled(retentionDays > 0);
    retention_->setToolTip(retentionDays > 0 ? tr("History older than this is deleted (this server's history file)")
                                             : tr("Connect to a server first: retention is kept in each server's history file"));
    theme_ = new QComboBox(this);
    theme_->setObjectName(QStringLiteral("settingsTheme"));
    theme_->addItem(tr("Follow the system"), theme::toString(theme::Mode::system));
    theme_->addItem(tr("Light"), theme::toString(theme::Mode::light));
    theme_->addItem(tr("Dark"), theme::toString(theme::Mode::dark));
    theme_->setCurrentIndex(theme_->findData(theme::toString(s.theme)));
    form->addRow(tr("Highlight waits longer than"), longWait_);
    form->addRow(tr("Highlight holds longer than"), longHold_);
    form->addRow(tr("Highlight holders idle in transaction longer than"), idle_);
    form->addRow(tr("Poll every (at start)"), interval_);
    form->addRow(tr("Keep history for"), retention_);
    form->addRow(tr("Theme"), theme_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

AppSettings SettingsDialog::settings() const {
    AppSettings s;
    s.longWaitSeconds = longWait_->value();
    s.longHoldSeconds = longHold_->value();
    s.idleInTransactionSeconds = idle_->value();
    s.pollIntervalSeconds = interval_->value();
    s.theme = theme::modeFromString(theme_->currentData().toString()).value_or(theme::Mode::system);
    return s;
}

int SettingsDialog::retentionDays() const { return retention_->isEnabled() ? retention_->value() : 0; }

}  // namespace lockscope
