#include "widgets/connection_dialog.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QListWidget>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "metrics/metrics_scraper.hpp"
#include "pglock/conninfo.hpp"
#include "pglock/conninfo_secrets.hpp"

namespace lockscope {

ConnectionDialog::ConnectionDialog(ProfileStore& store, QWidget* parent) : QDialog(parent), store_(store) {
    setWindowTitle(tr("Connect to PostgreSQL"));
    auto* layout = new QVBoxLayout(this);

    auto* top = new QHBoxLayout();
    profiles_ = new QComboBox(this);
    profiles_->addItem(tr("(new profile)"));
    profiles_->addItems(store_.names());
    auto* removeButton = new QPushButton(tr("Delete"), this);
    top->addWidget(new QLabel(tr("Profile:"), this));
    top->addWidget(profiles_, 1);
    top->addWidget(removeButton);
    layout->addLayout(top);

    auto* form = new QFormLayout();
    name_ = new QLineEdit(this);
    conninfo_ = new QLineEdit(this);
    conninfo_->setPlaceholderText(tr("host=db1 dbname=app  or  postgresql://…  or  service=prod"));
    host_ = new QLineEdit(this);
    host_->setPlaceholderText(tr("default: libpq / PGHOST"));
    port_ = new QLineEdit(this);
    dbname_ = new QLineEdit(this);
    user_ = new QLineEdit(this);
    sslmode_ = new QComboBox(this);
    sslmode_->addItems({QString(), QStringLiteral("disable"), QStringLiteral("allow"), QStringLiteral("prefer"),
                        QStringLiteral("require"), QStringLiteral("verify-ca"), QStringLiteral("verify-full")});
    appname_ = new QLineEdit(this);
    appname_->setPlaceholderText(QStringLiteral("lockscope"));
    password_ = new QLineEdit(this);
    password_->setEchoMode(QLineEdit::Password);
    password_->setPlaceholderText(tr("optional; kept in memory for this session, never saved"));
    production_ = new QCheckBox(tr("Production (open read-only)"), this);
    readOnly_ = new QCheckBox(tr("Read-only: no taking or releasing locks, no cancel/terminate"), this);
    metricsUrls_ = new QPlainTextEdit(this);
    metricsUrls_->setPlaceholderText(tr("optional; one per line, e.g. http://app1:9187/metrics or app2:9187"));
    metricsUrls_->setTabChangesFocus(true);
    metricsUrls_->setFixedHeight(metricsUrls_->fontMetrics().lineSpacing() * 4 + 12);
    form->addRow(tr("Name"), name_);
    form->addRow(tr("Conninfo / URI / service"), conninfo_);
    form->addRow(tr("Host"), host_);
    form->addRow(tr("Port"), port_);
    form->addRow(tr("Database"), dbname_);
    form->addRow(tr("User"), user_);
    form->addRow(tr("sslmode"), sslmode_);
    form->addRow(tr("application_name"), appname_);
    form->addRow(tr("Password"), password_);
    form->addRow(QString(), production_);
    form->addRow(QString(), readOnly_);
    form->addRow(tr("Application metrics"), metricsUrls_);
    layout->addLayout(form);

    // Several servers at once: each checked profile opens in a session of its own (Fleet tab).
    others_ = new QListWidget(this);
    others_->setObjectName(QStringLiteral("alsoOpenProfiles"));
    for (const QString& name : store_.names()) {
        auto* item = new QListWidgetItem(name, others_);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Unchecked);
    }
    others_->setMaximumHeight(6 * fontMetrics().height());
    others_->setVisible(others_->count() > 0);
    auto* othersLabel = new QLabel(tr("Also open, each as a server of its own (Fleet tab):"), this);
    othersLabel->setVisible(others_->count() > 0);
    layout->addWidget(othersLabel);
    layout->addWidget(others_);

    error_ = new QLabel(this);
    error_->setTextFormat(Qt::PlainText);  // shows server or user text: never as HTML (plain_text.hpp)
    error_->setStyleSheet(QStringLiteral("color: #b00020"));
    error_->setWordWrap(true);
    error_->hide();
    layout->addWidget(error_);
    auto* hint = new QLabel(tr("Passwords are never written to disk: use ~/.pgpass, a service file, PGPASSWORD, "
                               "or the field above for this session only."),
                            this);
    hint->setWordWrap(true);
    hint->setEnabled(false);
    layout->addWidget(hint);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Connect"));
    layout->addWidget(buttons);

    connect(profiles_, &QComboBox::currentTextChanged, this, &ConnectionDialog::loadProfile);
    // clicked, not toggled: only the user's own click ends the following, not ours below.
    connect(readOnly_, &QCheckBox::clicked, this, [this] { readOnlyTouched_ = true; });
    connect(production_, &QCheckBox::toggled, this, [this](bool production) {
        if (!readOnlyTouched_) readOnly_->setChecked(production);
    });
    connect(removeButton, &QPushButton::clicked, this, &ConnectionDialog::removeProfile);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (!validate()) return;
        saveProfile();
        accept();
    });
    const QString last = store_.lastUsed();
    if (!last.isEmpty() && store_.names().contains(last)) profiles_->setCurrentText(last);
}

void ConnectionDialog::loadProfile(const QString& name) {
    if (profiles_->currentIndex() <= 0) return;
    const ConnectionProfile p = store_.load(name);
    name_->setText(p.name);
    conninfo_->setText(p.conninfo);
    host_->setText(p.host);
    port_->setText(p.port);
    dbname_->setText(p.dbname);
    user_->setText(p.user);
    sslmode_->setCurrentText(p.sslmode);
    appname_->setText(p.applicationName);
    production_->setChecked(p.production);
    readOnly_->setChecked(p.readOnly);  // after production_, whose toggle would override it
    readOnlyTouched_ = false;
    metricsUrls_->setPlainText(p.metricsUrls.join(QLatin1Char('\n')));
}

ConnectionProfile ConnectionDialog::profile() const {
    ConnectionProfile p;
    p.name = name_->text().trimmed();
    p.conninfo = conninfo_->text().trimmed();
    p.host = host_->text().trimmed();
    p.port = port_->text().trimmed();
    p.dbname = dbname_->text().trimmed();
    p.user = user_->text().trimmed();
    p.sslmode = sslmode_->currentText();
    p.applicationName = appname_->text().trimmed();
    p.production = production_->isChecked();
    p.readOnly = readOnly_->isChecked();
    for (const QString& line : metricsUrlLines()) {
        const QUrl url = MetricsScraper::endpointFromUserInput(line);
        p.metricsUrls << (url.isValid() ? url.toString() : line);
    }
    return p;
}

QString ConnectionDialog::password() const { return password_->text(); }

QStringList ConnectionDialog::metricsUrlLines() const {
    QStringList lines;
    for (const QString& line : metricsUrls_->toPlainText().split(QLatin1Char('\n'))) {
        if (!line.trimmed().isEmpty()) lines << line.trimmed();
    }
    return lines;
}

bool ConnectionDialog::validate() {
    const std::string conninfo = profile().toConninfo().toStdString();
    QString problem;
    if (auto err = pglock::conninfo_error(conninfo)) {
        problem = tr("Not a valid connection string: %1").arg(QString::fromStdString(*err));
    } else if (pglock::conninfo_has_secret(conninfo)) {
        problem = tr("This connection string contains a password (or another secret such as sslpassword), and "
                     "profiles are saved to disk. Remove it and use the password field, ~/.pgpass, PGPASSWORD "
                     "or a service file.");
    } else {
        for (const QString& line : metricsUrlLines()) {
            QString why;
            const QUrl url = MetricsScraper::endpointFromUserInput(line, &why);
            if (!url.isValid()) {
                problem = tr("Application metrics: %1").arg(why);
                break;
            }
            if (!url.userInfo().isEmpty()) {
                problem = tr("Application metrics: %1 carries a user name or password, and profiles are saved to disk. "
                             "Remove it (pass such an endpoint with --metrics for one session).")
                              .arg(url.toDisplayString(QUrl::RemoveUserInfo));
                break;
            }
        }
    }
    error_->setText(problem);
    error_->setVisible(!problem.isEmpty());
    return problem.isEmpty();
}

void ConnectionDialog::saveProfile() {
    ConnectionProfile p = profile();
    if (p.name.isEmpty()) return;  // an unnamed connection is used once and not remembered
    store_.save(p);
    store_.setLastUsed(p.name);
}

QStringList ConnectionDialog::alsoOpen() const {
    QStringList out;
    const QString chosen = name_->text().trimmed();
    for (int i = 0; i < others_->count(); ++i) {
        const QListWidgetItem* item = others_->item(i);
        if (item->checkState() == Qt::Checked && item->text() != chosen) out << item->text();
    }
    return out;
}

void ConnectionDialog::removeProfile() {
    if (profiles_->currentIndex() <= 0) return;
    store_.remove(profiles_->currentText());
    profiles_->removeItem(profiles_->currentIndex());
}

}  // namespace lockscope
