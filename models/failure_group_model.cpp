// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/failure_group_model.h"

#include "models/display_format.h"

#include <QColor>
#include <QJsonObject>
#include <algorithm>

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

// The verdict cell of a row: the counts once failure_group_verdicts.sql answered, "…" while it
// counts, "—" beyond the groups it is asked for.
std::optional<QVariant> verdictHook(const FailureGroupModel *model, const ResultCell &cell,
                                    int role)
{
    if (role == Qt::TextAlignmentRole)
        return QVariant();
    const std::optional<FailureGroupModel::GroupVerdicts> v = model->verdictsAt(cell.row);
    if (!v) {
        if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
            return QVariant();
        const bool display = role == Qt::DisplayRole;
        if (cell.row >= FailureGroupModel::kVerdictGroups)
            return display ? FailureGroupModel::tr("\u2014")
                           : FailureGroupModel::tr("Verdicts are counted for the %1 groups listed "
                                                   "first.")
                                 .arg(FailureGroupModel::kVerdictGroups);
        if (model->verdictsPending())
            return display ? FailureGroupModel::tr("\u2026")
                           : FailureGroupModel::tr("Counting the safe-to-retry verdicts\u2026");
        return display ? FailureGroupModel::tr("?")
                       : FailureGroupModel::tr("The verdicts could not be counted: %1")
                             .arg(model->verdictError());
    }
    switch (role) {
    case Qt::DisplayRole: {
        const QString summary = display::verdictSummary(v->safe, v->warn, v->blocked);
        return v->sampled ? FailureGroupModel::tr("%1 (newest %L2)").arg(summary).arg(v->sample)
                          : summary;
    }
    case Qt::ForegroundRole:
        if (v->blocked > 0)
            return QColor(display::rgb(display::Tone::Error));
        if (v->warn > 0)
            return QColor(display::rgb(display::Tone::Warning));
        return v->safe > 0 ? QVariant(QColor(display::rgb(display::Tone::Ok))) : QVariant();
    case Qt::ToolTipRole: {
        QString tip;
        if (v->sampled)
            tip = FailureGroupModel::tr("A sample: the %L1 newest open dead letters of this group "
                                        "(it has more) were judged.\n")
                      .arg(v->sample);
        tip += v->reasons.isEmpty()
            ? (v->sampled ? FailureGroupModel::tr("Every one of them is safe to retry.")
                          : FailureGroupModel::tr(
                              "Every open dead letter of this group is safe to retry."))
            : FailureGroupModel::tr("Why (open dead letters per rule): %1").arg(v->reasons);
        if (model->verdictsPending())
            tip += FailureGroupModel::tr("\nCounting them again\u2026");
        return tip;
    }
    default:
        return std::nullopt;
    }
}

// A count cell when a text filter matched more dead letters than were counted
// (failure_groups.sql, sampled_matches): the group has at least this many, so "≥ n", and the
// tooltip says over how many matches it was counted. A search does not count the statuses its
// status filter leaves out (NULL): "—". Exact counts keep the column's format.
std::optional<QVariant> countHook(const ResultCell &cell, int role)
{
    if (cell.isNull()) {
        if (role == Qt::DisplayRole)
            return FailureGroupModel::tr("\u2014");
        if (role == Qt::ToolTipRole)
            return FailureGroupModel::tr("Not counted: a search counts only the dead letters of "
                                         "the statuses filtered.");
        return std::nullopt;
    }
    if (cell.isNull(QStringLiteral("sampled_matches")))
        return std::nullopt;
    switch (role) {
    case Qt::DisplayRole:
        return FailureGroupModel::tr("\u2265 %L1")
            .arg(cell.rows.bigInt(cell.row, cell.column).value_or(0));
    case Qt::ToolTipRole:
        return FailureGroupModel::tr("Counted over a sample: the first %L1 dead letters found that "
                                     "match the filter and the search (more match). The group "
                                     "has at least this many.")
            .arg(cell.rows.bigInt(cell.row, QStringLiteral("sampled_matches")).value_or(0));
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
                // No such result column in failure_groups.sql: the hook reads the verdicts,
                // which come later (failure_group_verdicts.sql); the name is the one copy-out
                // gives the count of safe ones.
                { QStringLiteral("verdict_safe"), tr("Safe to retry?"), F::Integer,
                  [this](const ResultCell &cell, int role) {
                      return verdictHook(this, cell, role);
                  } },
                { QStringLiteral("dead_letters"), tr("Count"), F::Integer, countHook },
                { QStringLiteral("open_dead_letters"), tr("Open"), F::Integer, countHook },
                { QStringLiteral("in_flight_dead_letters"), tr("In flight"), F::Integer,
                  countHook },
                { QStringLiteral("resolved_dead_letters"), tr("Resolved"), F::Integer, countHook },
                { QStringLiteral("hourly"), tr("Last 24 h"), F::Text, trendHook },
                { QStringLiteral("differs"), tr("Differs from look-alikes"), F::Text, differsHook },
                { QStringLiteral("first_dead_at"), tr("First seen"), F::Time },
                { QStringLiteral("last_dead_at"), tr("Last seen"), F::Time },
                { QStringLiteral("kind"), tr("Kind") },
                { QStringLiteral("error_class"), tr("Class") },
            },
            { { FingerprintRole, QStringLiteral("fingerprint") } },
            { { QStringLiteral("regressed_at"), JsonValueKind::Timestamp },
              { QStringLiteral("resolved_at"), JsonValueKind::Timestamp } }),
        parent)
{
    connect(this, &ResultTableModel::loaded, this, &FailureGroupModel::loadVerdicts);
    connect(this, &ResultTableModel::failed, this, [this](const db::DbError &error) {
        if (!m_verdictsPending)
            return;
        m_verdictsPending = false;
        m_verdictError = error.summary();
        verdictCellsChanged();
    });
}

void FailureGroupModel::setFilter(const DeadLetterFilter &filter)
{
    const DeadLetterFilter groups = filter.withoutFingerprint();
    const bool another = groups != m_filter;
    m_filter = groups;
    if (another) {
        // Another filter's groups and verdicts say nothing about this one's: none are shown
        // until its own arrive (a re-read of the same filter keeps them meanwhile).
        m_verdicts.clear();
        setResult(db::ResultSet());
    }
    reload();
}

void FailureGroupModel::reload()
{
    ++m_verdictGeneration;
    if (m_verdictRequest != 0)
        session()->abortRequest(m_verdictRequest); // obsolete: never let it run or finish
    m_verdictRequest = 0;
    // The verdicts shown stay until the new ones arrive (a live re-read must not blank them);
    // groups without any say "…" meanwhile.
    m_verdictError.clear();
    m_verdictsPending = true;
    verdictCellsChanged();
    db::QueryParams params;
    m_filter.appendParams(params);
    params.addInt(kMaxGroups).addInt(kSearchSample);
    load(db::Statement::FailureGroups, params);
}

void FailureGroupModel::loadVerdicts()
{
    ++m_verdictGeneration;
    if (m_verdictRequest != 0)
        session()->abortRequest(m_verdictRequest);
    m_verdictRequest = 0;
    m_verdictError.clear();
    QStringList fingerprints;
    for (int row = 0; row < std::min(rowCount(), kVerdictGroups); ++row)
        fingerprints << fingerprintAt(row);
    if (fingerprints.isEmpty()) {
        m_verdicts.clear();
        m_verdictsPending = false;
        Q_EMIT verdictsLoaded();
        return;
    }
    m_verdictsPending = true;
    // The groups statement's filter (failure_group_verdicts.sql $1..$8, bound the same way), the
    // groups, the cap.
    db::QueryParams params;
    m_filter.appendParams(params);
    params.addTextArray(fingerprints).addInt(kVerdictSample);
    const quint64 generation = m_verdictGeneration;
    m_verdictRequest = session()->execute(
        db::statementSql(db::Statement::FailureGroupVerdicts), params, this,
        [this, generation, fingerprints](const db::DbExpected<db::ResultSet> &rows) {
            if (generation != m_verdictGeneration)
                return; // a newer reload() is on its way
            m_verdictRequest = 0;
            m_verdictsPending = false;
            if (!rows) {
                m_verdicts.clear();
                m_verdictError = rows.error().summary();
                verdictCellsChanged();
                Q_EMIT verdictsFailed(rows.error());
                return;
            }
            const db::ResultSet &r = rows.value();
            m_verdicts.clear();
            // A group asked for without a row has no open dead letter that matches: all zero.
            for (const QString &fingerprint : fingerprints)
                m_verdicts.insert(fingerprint, GroupVerdicts());
            for (int row = 0; row < r.rowCount(); ++row) {
                GroupVerdicts v;
                v.sample = r.bigInt(row, QStringLiteral("verdict_sample")).value_or(0);
                v.safe = r.bigInt(row, QStringLiteral("verdict_safe")).value_or(0);
                v.warn = r.bigInt(row, QStringLiteral("verdict_warn")).value_or(0);
                v.blocked = r.bigInt(row, QStringLiteral("verdict_blocked")).value_or(0);
                v.sampled = r.boolean(row, r.columnIndex(QStringLiteral("verdict_sampled")))
                                .value_or(false);
                v.reasons = r.text(row, QStringLiteral("verdict_reasons"));
                m_verdicts.insert(r.text(row, QStringLiteral("fingerprint")), v);
            }
            verdictCellsChanged();
            Q_EMIT verdictsLoaded();
        },
        // Its own connection: seconds of verdicts never hold up the counts and groups of the
        // next filter on the shared background connection, and a reload cancels them on the
        // server (DatabaseSession::abortRequest()).
        db::DatabaseSession::Priority::OwnConnection);
}

std::optional<FailureGroupModel::GroupVerdicts> FailureGroupModel::verdictsAt(int row) const
{
    if (row < 0 || row >= kVerdictGroups)
        return std::nullopt;
    const auto it = m_verdicts.constFind(fingerprintAt(row));
    if (it == m_verdicts.constEnd())
        return std::nullopt;
    return *it;
}

void FailureGroupModel::verdictCellsChanged()
{
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, Verdicts), index(rowCount() - 1, Verdicts));
}

QVariant FailureGroupModel::data(const QModelIndex &index, int role) const
{
    QVariant value = ResultTableModel::data(index, role);
    if (role != kRowJsonRole || !value.isValid())
        return value;
    const std::optional<GroupVerdicts> v = verdictsAt(index.row());
    if (!v)
        return value;
    QJsonObject row = value.toJsonObject();
    row.insert(QStringLiteral("verdict_safe"), v->safe);
    row.insert(QStringLiteral("verdict_warn"), v->warn);
    row.insert(QStringLiteral("verdict_blocked"), v->blocked);
    row.insert(QStringLiteral("verdict_reasons"),
               v->reasons.isNull() ? QJsonValue() : QJsonValue(v->reasons));
    row.insert(QStringLiteral("verdict_sample"), v->sample);
    row.insert(QStringLiteral("verdict_sampled"), v->sampled);
    return row;
}

} // namespace redrive
