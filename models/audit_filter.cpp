// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_filter.h"

#include "models/db/query_params.h"
#include "models/display_format.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <QTimeZone>

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
// after it. Read here, strictly, rather than by QDateTime::fromString: Qt reads milliseconds and
// rounds the rest (".1239" became ".124", which took in entries after an "until"), and a date
// whose time it could not read ("T23:59:60Z", "01:50:00 +00:00", "T25:00") fell back to the
// date's midnight instead of being refused.
bool parseBound(const QString &text, QDateTime *time, int *subMs)
{
    static const QRegularExpression iso(
        QStringLiteral("^(\\d{4})-(\\d{2})-(\\d{2})"
                       "(?:[Tt ](\\d{2}):(\\d{2})(?::(\\d{2})(?:[.,](\\d{1,6}))?)?"
                       " ?([Zz]|[+-]\\d{2}(?::?\\d{2})?)?)?\\z"));
    // Only ASCII spaces and tabs around it are dropped, as PostgreSQL drops them: QString's
    // trimmed() also took NBSP, U+3000 and NEL, and "$" let a final newline through.
    qsizetype first = 0;
    qsizetype last = text.size();
    while (first < last
           && (text.at(first) == QLatin1Char(' ') || text.at(first) == QLatin1Char('\t')))
        ++first;
    while (last > first
           && (text.at(last - 1) == QLatin1Char(' ') || text.at(last - 1) == QLatin1Char('\t')))
        --last;
    const QRegularExpressionMatch m = iso.match(text.mid(first, last - first));
    if (!m.hasMatch())
        return false;
    const QDate date(m.captured(1).toInt(), m.captured(2).toInt(), m.captured(3).toInt());
    if (!date.isValid())
        return false;
    QDateTime parsed;
    int micros = 0;
    if (!m.hasCaptured(4)) {
        parsed = date.startOfDay(); // local midnight
    } else {
        micros = m.captured(7).leftJustified(6, QLatin1Char('0')).toInt();
        const QTime clock(m.captured(4).toInt(), m.captured(5).toInt(),
                          m.hasCaptured(6) ? m.captured(6).toInt() : 0, micros / 1000);
        if (!clock.isValid()) // 24:00, 23:59:60, 25:00
            return false;
        const QString zone = m.captured(8);
        if (zone.isEmpty()) {
            // Local time; one that a daylight-saving change skips does not exist: refused
            // rather than moved by the gap.
            parsed = QDateTime(date, clock);
            if (!parsed.isValid() || parsed.date() != date || parsed.time() != clock)
                return false;
            // One that occurs twice (the hour a daylight-saving change repeats) is refused too:
            // Qt and PostgreSQL do not always pick the same of the two instants.
            const QDateTime wall(date, clock, QTimeZone::utc());
            const int before = parsed.addDays(-1).offsetFromUtc();
            const int after = parsed.addDays(1).offsetFromUtc();
            if (before != after) {
                int instants = 0;
                for (const int offset : { before, after }) {
                    const QDateTime local = wall.addSecs(-offset).toLocalTime();
                    if (local.date() == date && local.time() == clock)
                        ++instants;
                }
                if (instants > 1)
                    return false;
            }
        } else {
            int offset = 0;
            if (zone.compare(QLatin1String("z"), Qt::CaseInsensitive) != 0) {
                const QString digits = QString(zone.mid(1)).remove(QLatin1Char(':'));
                const int hours = digits.left(2).toInt();
                const int minutes = digits.size() > 2 ? digits.mid(2).toInt() : 0;
                if (minutes > 59 || hours * 60 + minutes > 14 * 60) // every zone's, and Qt's
                    return false;
                offset = (hours * 60 + minutes) * 60 * (zone.startsWith(QLatin1Char('-')) ? -1 : 1);
            }
            parsed = QDateTime(date, clock, QTimeZone(offset));
        }
    }
    const int year = parsed.toUTC().date().year();
    if (!parsed.isValid() || year < 1 || year > 9999) // what the bound's text can say
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
        parts << tr("actor %1").arg(display::revealInvisibleInLine(actor));
    if (!action.isEmpty())
        parts << tr("action %1").arg(display::revealInvisibleInLine(action));
    if (!targetText().isEmpty())
        parts << tr("target %1").arg(display::revealInvisibleInLine(targetText()));
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
