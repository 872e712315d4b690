// Connection profiles, kept in QSettings. A profile never holds a password or other secret: libpq's own means
// (.pgpass, service files, PGPASSWORD) or a password typed for this session only, in memory.
#pragma once

#include <QSettings>
#include <QString>
#include <QStringList>

namespace lockscope {

struct ConnectionProfile {
    QString name;
    // Either a conninfo / URI / "service=..." line, or the fields below (used when it is empty).
    QString conninfo;
    QString host, port, dbname, user, sslmode, applicationName;
    bool production = false;  // production profiles open read-only by default
    // Whether lockscope may take/release locks or end sessions on this server. A new profile
    // marked production starts read-only; a saved profile keeps what was saved (profiles saved
    // before this field existed read it from `production`).
    bool readOnly = false;
    // Prometheus /metrics URLs of applications that use the library against this server; the
    // metrics panel scrapes them.
    QStringList metricsUrls;

    // The libpq conninfo string for this profile (values quoted as libpq requires).
    QString toConninfo() const;
};

class ProfileStore {
public:
    // Uses the application's QSettings (organization/application names set by main()).
    ProfileStore() = default;
    explicit ProfileStore(const QString& iniPath) : settings_(iniPath, QSettings::IniFormat) {}

    QStringList names() const;
    ConnectionProfile load(const QString& name) const;
    // Strips every secret from the profile's connection string (see conninfo_without_secrets)
    // and the user:password@ from its metrics URLs.
    void save(const ConnectionProfile& profile);
    void remove(const QString& name);
    QString lastUsed() const;
    void setLastUsed(const QString& name);

private:
    mutable QSettings settings_;
};

}  // namespace lockscope
