// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_filter.h"

#include "models/db/query_params.h"

#include <QCoreApplication>
#include <QRegularExpression>

namespace redrive {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("AuditFilter", text);
}

bool isNumericId(const QString &text)
{
    static const QRegularExpression digits(QStringLiteral("^[0-9]{1,18}$"));
    return digits.match(text).hasMatch();
}

void addTextOrNull(db::QueryParams &params, const QString &text)
{
    if (text.isEmpty())
        params.addNull(db::ParamType::Text);
    else
        params.addText(text);
}

QJsonValue jsonOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

// `time` and `subMs` microseconds as UTC ISO 8601 text: "…T10:00:00.123Z", or with the
// microseconds "…T10:00:00.123456Z".
QString isoText(const QDateTime &time, int subMs)
{
    QString text = time.toUTC().toString(Qt::ISODateWithMs);
    if (subMs != 0 && text.endsWith(QLatin1Char('Z')))
        text.insert(text.size() - 1, QStringLiteral("%1").arg(subMs, 3, 10, QLatin1Char('0')));
    return text;
}

QJsonValue jsonOrNull(const QDateTime &time, int subMs)
{
    return time.isValid() ? QJsonValue(isoText(time, subMs)) : QJsonValue(QJsonValue::Null);
}

// A bound as a timestamptz parameter; with microseconds, as text PostgreSQL reads exactly.
void addBound(db::QueryParams &params, const QDateTime &time, int subMs)
{
    if (subMs == 0 || !time.isValid())
        params.addTimestamp(time); // invalid: NULL
    else
        params.addTimestampText(isoText(time, subMs).toUtf8());
}

// ISO 8601 text as setFromText() reads it: the instant to the millisecond and the microseconds
// after it. Qt reads only milliseconds and rounds the rest (".1239" became ".124", which
// would take in entries after an "until"), so the fraction is split off and read here.
bool parseBound(const QString &text, QDateTime *time, int *subMs)
{
    QString t = text.trimmed();
    if (t.size() > 10 && t.at(10) == QLatin1Char(' '))
        t[10] = QLatin1Char('T');
    int micros = 0;
    static const QRegularExpression fraction(
        QStringLiteral("^(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2})[.,](\\d+)(.*)$"));
    const QRegularExpressionMatch m = fraction.match(t);
    if (m.hasMatch()) {
        const QString digits = m.captured(2);
        if (digits.size() > 6)
            return false;
        micros = digits.leftJustified(6, QLatin1Char('0')).toInt();
        t = m.captured(1) + QStringLiteral(".%1").arg(micros / 1000, 3, 10, QLatin1Char('0'))
            + m.captured(3);
    }
    QDateTime parsed = QDateTime::fromString(t, Qt::ISODateWithMs);
    if (!parsed.isValid() && !m.hasMatch()) {
        const QDate date = QDate::fromString(t, Qt::ISODate);
        if (date.isValid())
            parsed = date.startOfDay();
    }
    if (!parsed.isValid())
        return false;
    *time = parsed;
    *subMs = micros % 1000;
    return true;
}

} // namespace

QStringList AuditFilter::targetTypes()
{
    return { QStringLiteral("dead_letter"), QStringLiteral("mismatch"),
             QStringLiteral("compensation"), QStringLiteral("idempotency_key") };
}

QStringList AuditFilter::knownActions()
{
    return { QStringLiteral("requeue"),
             QStringLiteral("edit_and_requeue"),
             QStringLiteral("resolve"),
             QStringLiteral("claim"),
             QStringLiteral("unclaim"),
             QStringLiteral("note"),
             QStringLiteral("release_key"),
             QStringLiteral("resolve_mismatch"),
             QStringLiteral("compensate_request"),
             QStringLiteral("compensate_approve"),
             QStringLiteral("compensate_reject") };
}

bool AuditFilter::isEmpty() const
{
    return actor.isEmpty() && action.isEmpty() && !from.isValid() && !until.isValid()
        && targetType.isEmpty() && targetId.isEmpty();
}

void AuditFilter::setTargetText(const QString &text)
{
    const QString t = text.trimmed();
    targetType.clear();
    targetId.clear();
    for (const QString &type : targetTypes()) {
        if (t.size() > type.size() && t.startsWith(type)
            && (t.at(type.size()) == QLatin1Char(':') || t.at(type.size()) == QLatin1Char(' '))) {
            targetType = type;
            targetId = t.mid(type.size() + 1).trimmed();
            return;
        }
    }
    if (targetTypes().contains(t))
        targetType = t; // a type alone: every entry naming a target of that type
    else
        targetId = t;
}

QString AuditFilter::targetText() const
{
    if (targetType.isEmpty())
        return targetId;
    if (targetId.isEmpty())
        return targetType;
    return targetType + QLatin1Char(':') + targetId;
}

bool AuditFilter::setFromText(const QString &text)
{
    return parseBound(text, &from, &fromSubMs);
}

bool AuditFilter::setUntilText(const QString &text)
{
    return parseBound(text, &until, &untilSubMs);
}

void AuditFilter::appendParams(db::QueryParams &params) const
{
    addTextOrNull(params, actor);
    addTextOrNull(params, action);
    addBound(params, from, fromSubMs);
    addBound(params, until, untilSubMs);
    addTextOrNull(params, targetType);
    // Entries name numeric ids as JSON numbers and keys as strings: match the one the text is.
    if (isNumericId(targetId)) {
        params.addBigInt(targetId.toLongLong());
        params.addNull(db::ParamType::Text);
    } else {
        params.addNull(db::ParamType::BigInt);
        addTextOrNull(params, targetId);
    }
}

QString AuditFilter::describe() const
{
    QStringList parts;
    if (!actor.isEmpty())
        parts << tr("actor %1").arg(actor);
    if (!action.isEmpty())
        parts << tr("action %1").arg(action);
    if (!targetText().isEmpty())
        parts << tr("target %1").arg(targetText());
    const QString format = QStringLiteral("yyyy-MM-dd HH:mm");
    if (from.isValid())
        parts << tr("from %1").arg(from.toLocalTime().toString(format));
    if (until.isValid())
        parts << tr("until %1").arg(until.toLocalTime().toString(format));
    return parts.isEmpty() ? tr("all entries") : parts.join(QStringLiteral(" \u00b7 "));
}

QJsonObject AuditFilter::toJson() const
{
    return { { QStringLiteral("actor"), jsonOrNull(actor) },
             { QStringLiteral("action"), jsonOrNull(action) },
             { QStringLiteral("from"), jsonOrNull(from, fromSubMs) },
             { QStringLiteral("until"), jsonOrNull(until, untilSubMs) },
             { QStringLiteral("target"), jsonOrNull(targetText()) } };
}

} // namespace redrive
