// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/connection_settings.h"

#include <QStringList>
#include <libpq-fe.h>
#include <memory>

namespace redrive::db {

namespace {

using OptionsPtr = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;

// libpq's own parser, so the rules (quoting, URIs, percent-encoding, multiple hosts) are exactly
// the ones the connection will follow. Null when the text cannot be parsed.
OptionsPtr parse(const QString &connInfo)
{
    char *error = nullptr;
    PQconninfoOption *options = PQconninfoParse(connInfo.toUtf8().constData(), &error);
    if (error)
        PQfreemem(error); // the message may quote the text, password included: never shown
    return OptionsPtr(options, &PQconninfoFree);
}

// libpq marks secret options with the display character '*' (password, sslpassword).
bool isSecret(const PQconninfoOption &option)
{
    return (option.dispchar && option.dispchar[0] == '*')
        || qstrcmp(option.keyword, "password") == 0 || qstrcmp(option.keyword, "sslpassword") == 0;
}

// A value as libpq's key=value syntax needs it: bare when it is plain, else single-quoted with
// backslash escapes.
QString quoted(const QString &value)
{
    bool plain = !value.isEmpty();
    for (const QChar c : value)
        if (c.isSpace() || c == QLatin1Char('\'') || c == QLatin1Char('\\'))
            plain = false;
    if (plain)
        return value;
    QString v = value;
    v.replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
        .replace(QLatin1Char('\''), QStringLiteral("\\'"));
    return QLatin1Char('\'') + v + QLatin1Char('\'');
}

} // namespace

QString redactedConnInfo(const QString &connInfo, bool *ok)
{
    if (ok)
        *ok = true;
    if (connInfo.trimmed().isEmpty())
        return {};
    const OptionsPtr options = parse(connInfo);
    if (!options) {
        if (ok)
            *ok = false;
        return QStringLiteral("(connection string not shown: it cannot be parsed)");
    }
    QStringList parts;
    for (const PQconninfoOption *o = options.get(); o->keyword; ++o) {
        if (!o->val || isSecret(*o))
            continue;
        parts << QString::fromUtf8(o->keyword) + QLatin1Char('=')
                + quoted(QString::fromUtf8(o->val));
    }
    return parts.join(QLatin1Char(' '));
}

bool connInfoHasPassword(const QString &connInfo)
{
    if (connInfo.trimmed().isEmpty())
        return false;
    const OptionsPtr options = parse(connInfo);
    if (!options)
        return false;
    for (const PQconninfoOption *o = options.get(); o->keyword; ++o)
        if (o->val && isSecret(*o))
            return true;
    return false;
}

QString connInfoPassword(const QString &connInfo)
{
    if (connInfo.trimmed().isEmpty())
        return {};
    const OptionsPtr options = parse(connInfo);
    if (!options)
        return {};
    for (const PQconninfoOption *o = options.get(); o->keyword; ++o)
        if (o->val && qstrcmp(o->keyword, "password") == 0)
            return QString::fromUtf8(o->val);
    return {};
}

bool connInfoNamesStandby(const QString &connInfo)
{
    QString hosts;
    QString hostAddrs;
    QString attrs;
    if (!connInfo.trimmed().isEmpty()) {
        const OptionsPtr options = parse(connInfo);
        if (!options)
            return false;
        for (const PQconninfoOption *o = options.get(); o->keyword; ++o) {
            if (!o->val)
                continue;
            if (qstrcmp(o->keyword, "host") == 0)
                hosts = QString::fromUtf8(o->val);
            else if (qstrcmp(o->keyword, "hostaddr") == 0)
                hostAddrs = QString::fromUtf8(o->val);
            else if (qstrcmp(o->keyword, "target_session_attrs") == 0)
                attrs = QString::fromUtf8(o->val);
        }
    }
    // libpq's own fallbacks when the string names none (PostgreSQL manual, libpq "Environment
    // Variables").
    if (hosts.isEmpty() && hostAddrs.isEmpty())
        hosts = qEnvironmentVariable("PGHOST");
    if (hostAddrs.isEmpty())
        hostAddrs = qEnvironmentVariable("PGHOSTADDR");
    if (attrs.isEmpty())
        attrs = qEnvironmentVariable("PGTARGETSESSIONATTRS");
    attrs = attrs.trimmed();
    return hosts.contains(QLatin1Char(',')) || hostAddrs.contains(QLatin1Char(','))
        || attrs == QLatin1String("prefer-standby") || attrs == QLatin1String("standby");
}

namespace {

ConnectionSettings withAttrs(const ConnectionSettings &settings, const char *attrs)
{
    ConnectionSettings s = settings;
    s.targetSessionAttrs = QString::fromLatin1(attrs);
    return s;
}

// The target_session_attrs the operator's string (or the environment) asks for, or empty.
QString askedAttrs(const QString &connInfo)
{
    if (const OptionsPtr options = parse(connInfo)) {
        for (const PQconninfoOption *o = options.get(); o->keyword; ++o)
            if (o->val && qstrcmp(o->keyword, "target_session_attrs") == 0)
                return QString::fromUtf8(o->val).trimmed();
    }
    return qEnvironmentVariable("PGTARGETSESSIONATTRS").trimmed();
}

} // namespace

ConnectionSettings readSettings(const ConnectionSettings &settings)
{
    if (!connInfoNamesStandby(settings.connInfo))
        return settings;
    return withAttrs(settings,
                     askedAttrs(settings.connInfo) == QLatin1String("standby") ? "standby"
                                                                               : "prefer-standby");
}

ConnectionSettings primarySettings(const ConnectionSettings &settings)
{
    if (!connInfoNamesStandby(settings.connInfo))
        return settings;
    return withAttrs(settings, "read-write");
}

ConnectionSettings standbyOnlySettings(const ConnectionSettings &settings)
{
    return withAttrs(settings, "standby");
}

} // namespace redrive::db
