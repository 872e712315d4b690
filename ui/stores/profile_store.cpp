#include "stores/profile_store.hpp"

#include <QUrl>

#include "pglock/conninfo.hpp"
#include "pglock/conninfo_secrets.hpp"

namespace lockscope {
namespace {

QString group(const QString& name) { return QStringLiteral("profiles/") + QString::fromLatin1(name.toUtf8().toHex()); }

}  // namespace

QString ConnectionProfile::toConninfo() const {
    if (!conninfo.trimmed().isEmpty()) return conninfo.trimmed();
    std::vector<pglock::ConninfoOption> options;
    auto add = [&](const char* key, const QString& value) {
        if (!value.trimmed().isEmpty()) options.push_back({key, value.trimmed().toStdString()});
    };
    add("host", host);
    add("port", port);
    add("dbname", dbname);
    add("user", user);
    add("sslmode", sslmode);
    add("application_name", applicationName.isEmpty() ? QStringLiteral("lockscope") : applicationName);
    return QString::fromStdString(pglock::conninfo_string(options));
}

QStringList ProfileStore::names() const {
    QStringList out;
    settings_.beginGroup(QStringLiteral("profiles"));
    for (const QString& g : settings_.childGroups()) out << QString::fromUtf8(QByteArray::fromHex(g.toLatin1()));
    settings_.endGroup();
    out.sort(Qt::CaseInsensitive);
    return out;
}

ConnectionProfile ProfileStore::load(const QString& name) const {
    ConnectionProfile p;
    p.name = name;
    settings_.beginGroup(group(name));
    p.conninfo = settings_.value(QStringLiteral("conninfo")).toString();
    p.host = settings_.value(QStringLiteral("host")).toString();
    p.port = settings_.value(QStringLiteral("port")).toString();
    p.dbname = settings_.value(QStringLiteral("dbname")).toString();
    p.user = settings_.value(QStringLiteral("user")).toString();
    p.sslmode = settings_.value(QStringLiteral("sslmode")).toString();
    p.applicationName = settings_.value(QStringLiteral("application_name")).toString();
    p.production = settings_.value(QStringLiteral("production"), false).toBool();
    p.readOnly = settings_.value(QStringLiteral("read_only"), p.production).toBool();
    p.metricsUrls = settings_.value(QStringLiteral("metrics_urls")).toStringList();
    settings_.endGroup();
    return p;
}

void ProfileStore::save(const ConnectionProfile& p) {
    settings_.beginGroup(group(p.name));
    // Profiles go to disk, so no secret in the connection string does (password, sslpassword,
    // whatever libpq marks secret, a URI's password): it is stripped and the rest kept
    // (friendlier than refusing the whole profile; the dialog already asks the user to remove
    // it, this is the rule for every other caller). One that does not parse but seems to hold a
    // secret is dropped whole, since nothing of it can be kept safely.
    const QString conninfo = QString::fromStdString(pglock::conninfo_without_secrets(p.conninfo.toStdString()));
    // The same for a metrics URL's user:password@ (HTTP basic auth): the URL is kept without it.
    QStringList metricsUrls;
    for (const QString& text : p.metricsUrls) {
        const QUrl url(text);
        metricsUrls << (url.userInfo().isEmpty() && !text.contains(QLatin1Char('@'))
                            ? text
                            : url.adjusted(QUrl::RemoveUserInfo).toString(QUrl::FullyEncoded));
    }
    settings_.setValue(QStringLiteral("conninfo"), conninfo);
    settings_.setValue(QStringLiteral("host"), p.host);
    settings_.setValue(QStringLiteral("port"), p.port);
    settings_.setValue(QStringLiteral("dbname"), p.dbname);
    settings_.setValue(QStringLiteral("user"), p.user);
    settings_.setValue(QStringLiteral("sslmode"), p.sslmode);
    settings_.setValue(QStringLiteral("application_name"), p.applicationName);
    settings_.setValue(QStringLiteral("production"), p.production);
    settings_.setValue(QStringLiteral("read_only"), p.readOnly);
    settings_.setValue(QStringLiteral("metrics_urls"), metricsUrls);
    settings_.endGroup();
    settings_.sync();
}

void ProfileStore::remove(const QString& name) {
    settings_.remove(group(name));
    settings_.sync();
}

QString ProfileStore::lastUsed() const { return settings_.value(QStringLiteral("last_profile")).toString(); }

void ProfileStore::setLastUsed(const QString& name) {
    settings_.setValue(QStringLiteral("last_profile"), name);
    settings_.sync();
}

}  // namespace lockscope
