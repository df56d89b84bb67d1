// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/failure_group_model.h"

#include "models/display_format.h"

#include <QColor>

namespace redrive {

namespace {

using F = ResultColumn::Format;

// The group's name as a cell shows it: the bounded prefix every text cell shows
// (ResultColumn::Format::Text), never the whole name: a group named after a megabyte-long first
// line froze the list on every repaint (docs/security.md#text-from-the-database-is-plain-text).
QString shownName(const ResultCell &cell)
{
    static const ResultColumn kText { QStringLiteral("group_name"), QString(), F::Text };
    return kText.display(cell).toString();
}

std::optional<QVariant> nameHook(const ResultCell &cell, int role)
{
    const bool regression = !cell.isNull(QStringLiteral("regressed_at"));
    switch (role) {
    case Qt::DisplayRole:
        return regression ? FailureGroupModel::tr("Regression \u00b7 %1").arg(shownName(cell))
                          : QVariant(shownName(cell));
    case Qt::ForegroundRole:
        return regression ? QVariant(QColor(display::rgb(display::Tone::Error))) : QVariant();
    case Qt::ToolTipRole: {
        QString tip = FailureGroupModel::tr("%1\nKind %2, class %3\nSample: %4")
                          .arg(shownName(cell), cell.text(QStringLiteral("kind")),
                               cell.text(QStringLiteral("error_class")),
                               display::firstLine(cell.text(QStringLiteral("sample_message"))));
        if (regression)
            tip += FailureGroupModel::tr("\nRegression: resolved %1, failing again since %2")
                       .arg(display::time(
                                cell.rows.timestamp(
                                    cell.row, cell.rows.columnIndex(QStringLiteral("resolved_at"))),
                                cell.showUtc),
                            display::time(cell.rows.timestamp(cell.row,
                                                              cell.rows.columnIndex(
                                                                  QStringLiteral("regressed_at"))),
                                          cell.showUtc));
        return tip;
    }
    default:
        return std::nullopt;
    }
}

std::optional<QVariant> verdictHook(const ResultCell &cell, int role)
{
    const qint64 safe = cell.text().toLongLong();
    const qint64 warn = cell.text(QStringLiteral("verdict_warn")).toLongLong();
    const qint64 blocked = cell.text(QStringLiteral("verdict_blocked")).toLongLong();
    if (cell.isNull()) {
        if (role == Qt::DisplayRole)
            return FailureGroupModel::tr("\u2014");
        if (role == Qt::ToolTipRole)
            return FailureGroupModel::tr("Verdicts are counted for the %1 groups listed first.")
                .arg(FailureGroupModel::kVerdictGroups);
        return std::nullopt;
    }
    switch (role) {
    case Qt::DisplayRole:
        return display::verdictSummary(safe, warn, blocked);
    case Qt::ForegroundRole:
        if (blocked > 0)
            return QColor(display::rgb(display::Tone::Error));
        if (warn > 0)
            return QColor(display::rgb(display::Tone::Warning));
        return safe > 0 ? QVariant(QColor(display::rgb(display::Tone::Ok))) : QVariant();
    case Qt::ToolTipRole: {
        const QString reasons = cell.text(QStringLiteral("verdict_reasons"));
        return reasons.isEmpty()
            ? FailureGroupModel::tr("Every open dead letter of this group is safe to retry.")
            : FailureGroupModel::tr("Why (open dead letters per rule): %1").arg(reasons);
    }
    case Qt::TextAlignmentRole:
        return QVariant();
    default:
        return std::nullopt;
    }
}

std::optional<QVariant> trendHook(const ResultCell &cell, int role)
{
    const QList<qint64> counts = display::countList(cell.text());
    switch (role) {
    case Qt::DisplayRole:
        return display::sparkline(counts);
    case Qt::ToolTipRole:
        return FailureGroupModel::tr("Dead letters per hour over the last 24 hours (UTC hours, "
                                     "oldest first): %1")
            .arg(cell.text());
    default:
        return std::nullopt;
    }
}

// What failure_groups.sql says tells a group apart from its look-alikes (same error code),
// with its message cut to the words that differ: "message "…USD"" rather than the whole
// normalized message, which the list cuts before the part that differs. The tooltip keeps it all.
std::optional<QVariant> differsHook(const ResultCell &cell, int role)
{
    const QString text = cell.text();
    static const QString kMessage = QStringLiteral("message \"");
    const qsizetype at = text.indexOf(kMessage);
    if (role == Qt::ToolTipRole && !text.isEmpty())
        return text; // the whole of it; the model shows hook tooltips as plain text
    if (role != Qt::DisplayRole || at < 0)
        return std::nullopt;
    auto groupOf = [&cell](int row) {
        const QString code = cell.rows.text(row, QStringLiteral("error_code"));
        return code.isNull() ? cell.rows.text(row, QStringLiteral("error_class")) : code;
    };
    // group_name is "<code or class>: <normalized message>" (failure_groups.sql).
    const QString group = groupOf(cell.row);
    // A bounded prefix of each name: differingWords() splits it into words on every repaint.
    auto messageOf = [&cell, &group](int row) {
        return cell.rows
            .textPrefix(row, cell.rows.columnIndex(QStringLiteral("group_name")),
                        display::kMaxCellChars * 4)
            .mid(group.size() + 2);
    };
    QStringList lookAlikes;
    for (int row = 0; row < cell.rows.rowCount(); ++row) {
        if (row != cell.row && groupOf(row) == group)
            lookAlikes.append(messageOf(row));
    }
    return QString(text.left(at) + kMessage
                   + display::differingWords(messageOf(cell.row), lookAlikes) + QLatin1Char('"'));
}

} // namespace

FailureGroupModel::FailureGroupModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        ResultColumnSet(
            {
                { QStringLiteral("group_name"), tr("Failure group"), F::Text, nameHook },
                // Next to the name, so the answer on-call looks for is in view at any width
                // (docs/domain.md#failure-groups).
                { QStringLiteral("verdict_safe"), tr("Safe to retry?"), F::Integer, verdictHook },
                { QStringLiteral("dead_letters"), tr("Count"), F::Integer },
                { QStringLiteral("open_dead_letters"), tr("Open"), F::Integer },
                { QStringLiteral("in_flight_dead_letters"), tr("In flight"), F::Integer },
                { QStringLiteral("resolved_dead_letters"), tr("Resolved"), F::Integer },
                { QStringLiteral("hourly"), tr("Last 24 h"), F::Text, trendHook },
                { QStringLiteral("differs"), tr("Differs from look-alikes"), F::Text, differsHook },
                { QStringLiteral("first_dead_at"), tr("First seen"), F::Time },
                { QStringLiteral("last_dead_at"), tr("Last seen"), F::Time },
                { QStringLiteral("kind"), tr("Kind") },
                { QStringLiteral("error_class"), tr("Class") },
            },
            { { FingerprintRole, QStringLiteral("fingerprint") } },
            { { QStringLiteral("regressed_at"), JsonValueKind::Timestamp },
              { QStringLiteral("resolved_at"), JsonValueKind::Timestamp },
              { QStringLiteral("verdict_warn"), JsonValueKind::Integer },
              { QStringLiteral("verdict_blocked"), JsonValueKind::Integer } }),
        parent)
{ }

void FailureGroupModel::setFilter(const DeadLetterFilter &filter)
{
    m_filter = filter.withoutFingerprint();
    reload();
}

void FailureGroupModel::reload()
{
    db::QueryParams params;
    m_filter.appendParams(params);
    params.addInt(kMaxGroups);
    load(db::Statement::FailureGroups, params);
}

} // namespace redrive
