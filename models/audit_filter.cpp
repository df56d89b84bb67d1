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

QJsonValue jsonOrNull(const QDateTime &time)
{
    return time.isValid() ? QJsonValue(time.toUTC().toString(Qt::ISODateWithMs))
                          : QJsonValue(QJsonValue::Null);
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

void AuditFilter::appendParams(db::QueryParams &params) const
{
    addTextOrNull(params, actor);
    addTextOrNull(params, action);
    params.addTimestamp(from); // invalid: NULL
    params.addTimestamp(until);
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
             { QStringLiteral("from"), jsonOrNull(from) },
             { QStringLiteral("until"), jsonOrNull(until) },
             { QStringLiteral("target"), jsonOrNull(targetText()) } };
}

} // namespace redrive
