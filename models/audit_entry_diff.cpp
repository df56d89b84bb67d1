// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_entry_diff.h"

#include "models/display_format.h"
#include "models/payload_text.h"

#include <QCoreApplication>
#include <algorithm>

namespace redrive {

namespace {

QString tr(const char *text, int n = -1)
{
    return QCoreApplication::translate("AuditEntryDiff", text, nullptr, n);
}

using Type = JsonNode::Type;

// A value as compact JSON text ("open" with its quotes, 12, null, {"a":1}): numbers exactly as
// stored, members in their stored order (display::compactJson's rules, from the parsed value).
QString compact(const JsonNode &node)
{
    switch (node.type) {
    case Type::String:
        return display::jsonQuoted(node.value);
    case Type::Number:
    case Type::Bool:
    case Type::Null:
        return node.value;
    case Type::Array:
    case Type::Object: {
        const bool object = node.type == Type::Object;
        QString out = object ? QStringLiteral("{") : QStringLiteral("[");
        for (std::size_t i = 0; i < node.children.size(); ++i) {
            if (i)
                out += QLatin1Char(',');
            if (object)
                out += display::jsonQuoted(node.children[i].key) + QLatin1Char(':');
            out += compact(node.children[i]);
        }
        return out + (object ? QLatin1Char('}') : QLatin1Char(']'));
    }
    }
    return {};
}

const JsonNode *member(const JsonNode &object, const QString &key)
{
    for (const JsonNode &child : object.children) {
        if (child.key == key)
            return &child;
    }
    return nullptr;
}

// Same value: same type and literal, objects member by member whatever their order, arrays
// element by element. Numbers compare as written (jsonb keeps a numeric's digits).
bool same(const JsonNode &a, const JsonNode &b)
{
    if (a.type != b.type || a.value != b.value || a.children.size() != b.children.size())
        return false;
    for (std::size_t i = 0; i < a.children.size(); ++i) {
        if (a.type == Type::Object) {
            const JsonNode *other = member(b, a.children[i].key);
            if (!other || !same(a.children[i], *other))
                return false;
        } else if (!same(a.children[i], b.children[i])) {
            return false;
        }
    }
    return true;
}

QString join(const QString &prefix, const QString &key)
{
    return prefix.isEmpty() ? key : prefix + QLatin1Char('.') + key;
}

QStringList unionOfKeys(const JsonNode &a, const JsonNode &b)
{
    QStringList keys;
    for (const JsonNode &child : a.children)
        keys << child.key;
    for (const JsonNode &child : b.children) {
        if (!member(a, child.key))
            keys << child.key;
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
}

void diffValues(const QString &path, const JsonNode *before, const JsonNode *after,
                QList<AuditDiffLine> &out)
{
    using Change = AuditDiffLine::Change;
    if (before && after && before->type == Type::Object && after->type == Type::Object) {
        if (before->children.empty() && after->children.empty()) {
            out.append({ path, Change::Unchanged, compact(*before), compact(*after) });
            return;
        }
        for (const QString &key : unionOfKeys(*before, *after))
            diffValues(join(path, key), member(*before, key), member(*after, key), out);
        return;
    }
    AuditDiffLine line { path, Change::Unchanged, before ? compact(*before) : QString(),
                         after ? compact(*after) : QString() };
    if (before && !after)
        line.change = Change::Removed;
    else if (!before && after)
        line.change = Change::Added;
    else if (!same(*before, *after))
        line.change = Change::Changed;
    out.append(line);
}

// Audit entries written before migration 21 name amounts `*_cents`, later ones `*_minor`
// (docs/domain.md#money): the same amount in minor units under its older name. Every object
// member named `x_cents` is compared as `x_minor`; where an entry holds both with the same value
// (migrations 9 to 20 wrote both), the `_cents` one is dropped, and where they differ both stay.
void renameCentsKeys(JsonNode &node)
{
    static const QLatin1String kCents("_cents");
    for (JsonNode &child : node.children)
        renameCentsKeys(child);
    if (node.type != Type::Object)
        return;
    std::vector<JsonNode> kept;
    kept.reserve(node.children.size());
    for (const JsonNode &child : node.children) {
        kept.push_back(child);
        if (!child.key.endsWith(kCents))
            continue;
        const QString minorKey = child.key.chopped(kCents.size()) + QStringLiteral("_minor");
        if (const JsonNode *twin = member(node, minorKey)) {
            if (same(*twin, child))
                kept.pop_back();
        } else {
            kept.back().key = minorKey;
        }
    }
    node.children = std::move(kept);
}

// The label of one target of a bulk before list: "id 42" (or its type and id when it has one).
QString targetLabel(const JsonNode &target, int index)
{
    const JsonNode *id = member(target, QStringLiteral("id"));
    const JsonNode *type = member(target, QStringLiteral("type"));
    const QString typeText = type && type->type == Type::String ? type->value : QString();
    if (!id)
        return tr("#%1").arg(index + 1);
    const QString idText = id->type == Type::String ? id->value : compact(*id);
    return typeText.isEmpty() ? tr("id %1").arg(idText) : typeText + QLatin1Char(' ') + idText;
}

bool isListOfObjects(const JsonNode &value)
{
    return value.type == Type::Array && !value.children.empty()
        && std::all_of(value.children.begin(), value.children.end(),
                       [](const JsonNode &v) { return v.type == Type::Object; });
}

} // namespace

AuditEntryDiff AuditEntryDiff::compute(const QString &beforeJson, const QString &afterJson)
{
    AuditEntryDiff diff;
    const bool hasBefore = !beforeJson.isNull();
    const bool hasAfter = !afterJson.isNull();
    // jsonb text is always valid JSON; should anything else arrive, it is shown as it is.
    auto parse = [](const QString &text) {
        if (std::optional<JsonNode> node = PayloadText::parseJson(text.toUtf8())) {
            renameCentsKeys(*node);
            return std::move(*node);
        }
        JsonNode raw;
        raw.type = Type::Number; // printed verbatim by compact()
        raw.value = text.trimmed();
        return raw;
    };
    const JsonNode before = hasBefore ? parse(beforeJson) : JsonNode();
    const JsonNode after = hasAfter ? parse(afterJson) : JsonNode();

    if (!hasBefore && !hasAfter) {
        diff.m_note = tr("No before or after state recorded: this action changed no record "
                         "(a note, or nothing was applied).");
        return diff;
    }
    if (hasBefore && !hasAfter) {
        // Nothing was applied (a conflict or a refusal): show what was there, unchanged.
        diff.m_note = tr("No after state recorded: nothing was changed.");
        diffValues(QString(), &before, &before, diff.m_lines);
        return diff;
    }
    if (!hasBefore && after.type == Type::Object) {
        diff.m_note = tr("No before state recorded: every field of the after state is shown "
                         "as added.");
        JsonNode empty;
        empty.type = Type::Object;
        diffValues(QString(), &empty, &after, diff.m_lines);
        return diff;
    }
    if (isListOfObjects(before) && after.type == Type::Object) {
        const std::vector<JsonNode> &targets = before.children;
        const int shown = std::min(int(targets.size()), kMaxTargets);
        for (int i = 0; i < shown; ++i) {
            JsonNode target = targets[std::size_t(i)];
            const QString label = targetLabel(target, i) + QStringLiteral(" \u00b7 ");
            std::erase_if(target.children, [](const JsonNode &m) {
                return m.key == QLatin1String("id") || m.key == QLatin1String("type");
            });
            QList<AuditDiffLine> lines;
            diffValues(QString(), &target, &after, lines);
            for (AuditDiffLine &line : lines)
                line.path.prepend(label);
            diff.m_lines.append(lines);
        }
        if (targets.size() > std::size_t(shown))
            diff.m_note = tr("%n more target(s) not shown; the raw before state lists every one.",
                             int(targets.size()) - shown);
        return diff;
    }
    diffValues(QString(), hasBefore ? &before : nullptr, hasAfter ? &after : nullptr, diff.m_lines);
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
