// Picks or edits a connection profile. Profiles are saved in QSettings without any password;
// a password typed here is handed to the poller for this session only.
#pragma once

#include <QDialog>

#include "stores/profile_store.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;

namespace lockscope {

class ConnectionDialog : public QDialog {
    Q_OBJECT
public:
    explicit ConnectionDialog(ProfileStore& store, QWidget* parent = nullptr);

    ConnectionProfile profile() const;
    QString password() const;  // in memory only
    // The saved profiles checked to open as well, each in a session of its own (not the one above).
    QStringList alsoOpen() const;

private:
    void loadProfile(const QString& name);
    void saveProfile();
    void removeProfile();
    bool validate();
    QStringList metricsUrlLines() const;

    ProfileStore& store_;
    QComboBox* profiles_;
    QLineEdit* name_;
    QLineEdit* conninfo_;
    QLineEdit* host_;
    QLineEdit* port_;
    QLineEdit* dbname_;
    QLineEdit* user_;
    QComboBox* sslmode_;
    QLineEdit* appname_;
    QLineEdit* password_;
    QCheckBox* production_;
    QCheckBox* readOnly_;
    bool readOnlyTouched_ = false;  // until the user clicks it, read-only follows "production"
    QPlainTextEdit* metricsUrls_;   // one /metrics URL per line
    QLabel* error_;
    QListWidget* others_;
};

}  // namespace lockscope
