// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/dead_letter_filter.h"

#include "models/display_format.h"

namespace redrive {

namespace {

void addList(db::QueryParams &params, const QStringList &values)
{
    if (values.isEmpty())
        params.addNull(db::ParamType::TextArray);
    else
        params.addTextArray(values);
}

} // namespace

QString literalContainsPattern(const QString &text)
{
    QString escaped;
    escaped.reserve(text.size() + 2);
    for (const QChar c : text) {
        if (c == QLatin1Char('\\') || c == QLatin1Char('%') || c == QLatin1Char('_'))
            escaped += QLatin1Char('\\');
        escaped += c;
    }
    return QLatin1Char('%') + escaped + QLatin1Char('%');
}

void DeadLetterFilter::appendParams(db::QueryParams &params) const
{
    addList(params, statuses);
    addList(params, queues);
    addList(params, kinds);
    addList(params, errorClasses);
    params.addTimestamp(from);
    params.addTimestamp(until);
    if (search.isEmpty())
        params.addNull(db::ParamType::Text);
    else
        params.addText(literalContainsPattern(search));
    if (fingerprint.isEmpty())
        params.addNull(db::ParamType::Text);
    else
        params.addText(fingerprint);
}

DeadLetterFilter DeadLetterFilter::withoutFingerprint() const
{
    DeadLetterFilter f = *this;
    f.fingerprint.clear();
    return f;
}

QString DeadLetterFilter::describe() const
{
    QStringList parts;
    auto list = [&](const char *label, const QStringList &values) {
        if (!values.isEmpty())
            parts << QStringLiteral("%1 %2").arg(QLatin1String(label),
                                                 values.join(QLatin1Char(',')));
    };
    list("status", statuses);
    list("queue", queues);
    list("kind", kinds);
    list("class", errorClasses);
    if (from.isValid())
        parts << QStringLiteral("since %1").arg(from.toLocalTime().toString(Qt::ISODate));
    if (until.isValid())
        parts << QStringLiteral("until %1").arg(until.toLocalTime().toString(Qt::ISODate));
    if (!search.isEmpty())
        parts << QStringLiteral("search \u201c%1\u201d").arg(search);
    if (!fingerprint.isEmpty())
        parts << QStringLiteral("group %1").arg(display::shortHash(fingerprint));
    return parts.isEmpty() ? QStringLiteral("all dead letters")
                           : parts.join(QStringLiteral(" \u00b7 "));
}

} // namespace redrive
