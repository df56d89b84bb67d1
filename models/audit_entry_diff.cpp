// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_entry_diff.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QSet>
#include <algorithm>

namespace redrive {

namespace {

QString tr(const char *text, int n = -1)
{
    return QCoreApplication::translate("AuditEntryDiff", text, nullptr, n);
}

// A value as compact JSON text ("open" with its quotes, 12, null, {"a":1}).
QString compact(const QJsonValue &value)
{
    const QByteArray json = QJsonDocument(QJsonArray { value }).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(json.mid(1, json.size() - 2));
}

QString join(const QString &prefix, const QString &key)
{
    return prefix.isEmpty() ? key : prefix + QLatin1Char('.') + key;
}

QStringList unionOfKeys(const QJsonObject &a, const QJsonObject &b)
{
    QStringList keys = a.keys();
    for (const QString &k : b.keys()) {
        if (!a.contains(k))
            keys << k;
    }
    std::sort(keys.begin(), keys.end());
    return keys;
}

void diffValues(const QString &path, const QJsonValue &before, bool hasBefore,
                const QJsonValue &after, bool hasAfter, QList<AuditDiffLine> &out)
{
    using Change = AuditDiffLine::Change;
    if (hasBefore && hasAfter && before.isObject() && after.isObject()) {
        const QJsonObject b = before.toObject();
        const QJsonObject a = after.toObject();
        if (b.isEmpty() && a.isEmpty()) {
            out.append({ path, Change::Unchanged, compact(before), compact(after) });
            return;
        }
        for (const QString &key : unionOfKeys(b, a))
            diffValues(join(path, key), b.value(key), b.contains(key), a.value(key),
                       a.contains(key), out);
        return;
    }
    AuditDiffLine line { path, Change::Unchanged, hasBefore ? compact(before) : QString(),
                         hasAfter ? compact(after) : QString() };
    if (hasBefore && !hasAfter)
        line.change = Change::Removed;
    else if (!hasBefore && hasAfter)
        line.change = Change::Added;
    else if (before != after)
        line.change = Change::Changed;
    out.append(line);
}

// The label of one target of a bulk before list: "id 42" (or its type and id when it has one).
QString targetLabel(const QJsonObject &target, int index)
{
    const QJsonValue id = target.value(QStringLiteral("id"));
    const QString type = target.value(QStringLiteral("type")).toString();
    if (id.isUndefined())
        return tr("#%1").arg(index + 1);
    const QString idText = id.isString() ? id.toString() : compact(id);
    return type.isEmpty() ? tr("id %1").arg(idText) : type + QLatin1Char(' ') + idText;
}

bool isListOfObjects(const QJsonValue &value)
{
    if (!value.isArray() || value.toArray().isEmpty())
        return false;
    const QJsonArray array = value.toArray();
    return std::all_of(array.begin(), array.end(),
                       [](const QJsonValue &v) { return v.isObject(); });
}

} // namespace

AuditEntryDiff AuditEntryDiff::compute(const QString &beforeJson, const QString &afterJson)
{
    AuditEntryDiff diff;
    const bool hasBefore = !beforeJson.isNull();
    const bool hasAfter = !afterJson.isNull();
    // jsonb text is always valid JSON; QJsonDocument takes only containers, so wrap it.
    auto parse = [](const QString &text) {
        return QJsonDocument::fromJson("[" + text.toUtf8() + "]").array().at(0);
    };
    const QJsonValue before = hasBefore ? parse(beforeJson) : QJsonValue();
    const QJsonValue after = hasAfter ? parse(afterJson) : QJsonValue();

    if (!hasBefore && !hasAfter) {
        diff.m_note = tr("No before or after state recorded: this action changed no record "
                         "(a note, or nothing was applied).");
        return diff;
    }
    if (hasBefore && !hasAfter) {
        // Nothing was applied (a conflict or a refusal): show what was there, unchanged.
        diff.m_note = tr("No after state recorded: nothing was changed.");
        diffValues(QString(), before, true, before, true, diff.m_lines);
        return diff;
    }
    if (!hasBefore && after.isObject()) {
        diff.m_note = tr("No before state recorded: every field of the after state is shown "
                         "as added.");
        diffValues(QString(), QJsonObject(), true, after, true, diff.m_lines);
        return diff;
    }
    if (isListOfObjects(before) && after.isObject()) {
        const QJsonArray targets = before.toArray();
        const int shown = std::min(int(targets.size()), kMaxTargets);
        for (int i = 0; i < shown; ++i) {
            QJsonObject target = targets.at(i).toObject();
            const QString label = targetLabel(target, i) + QStringLiteral(" \u00b7 ");
            target.remove(QStringLiteral("id"));
            target.remove(QStringLiteral("type"));
            QList<AuditDiffLine> lines;
            diffValues(QString(), target, true, after, true, lines);
            for (AuditDiffLine &line : lines)
                line.path.prepend(label);
            diff.m_lines.append(lines);
        }
        if (targets.size() > shown)
            diff.m_note = tr("%n more target(s) not shown; the raw before state lists every one.",
                             int(targets.size() - shown));
        return diff;
    }
    diffValues(QString(), before, hasBefore, after, hasAfter, diff.m_lines);
    if (!diff.m_lines.isEmpty() && diff.m_lines.first().path.isEmpty())
        diff.m_lines.first().path = tr("(whole value)");
    return diff;
}

int AuditEntryDiff::count(AuditDiffLine::Change change) const
{
    return int(std::count_if(m_lines.begin(), m_lines.end(),
                             [change](const AuditDiffLine &l) { return l.change == change; }));
}

QString AuditEntryDiff::changeName(AuditDiffLine::Change change)
{
    switch (change) {
    case AuditDiffLine::Change::Unchanged:
        return tr("unchanged");
    case AuditDiffLine::Change::Changed:
        return tr("changed");
    case AuditDiffLine::Change::Added:
        return tr("added");
    case AuditDiffLine::Change::Removed:
        return tr("removed");
    }
    return {};
}

} // namespace redrive
