// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/worker/fault_injector.h"

#include <QCryptographicHash>
#include <QRandomGenerator>
#include <QtEndian>

namespace redrive::worker {

namespace {

QString forcedKey(const QString &downstream, qint64 jobId, int attempt, int item)
{
    return QStringLiteral("%1/%2/%3/%4").arg(downstream).arg(jobId).arg(attempt).arg(item);
}

} // namespace

FaultInjector::FaultInjector(quint64 seed)
    : m_seed(seed)
{ }

void FaultInjector::setRates(const QString &downstream, const FaultRates &rates)
{
    m_rates.insert(downstream, rates);
}

void FaultInjector::addOutage(const QString &downstream, const QDateTime &start,
                              const QDateTime &end)
{
    m_outages.append({ downstream, start, end });
}

void FaultInjector::force(const QString &downstream, qint64 jobId, int attempt, FaultKind kind,
                          int item)
{
    m_forced.insert(forcedKey(downstream, jobId, attempt, item), kind);
}

Fault FaultInjector::draw(const QString &downstream, qint64 jobId, int attempt,
                          const QDateTime &now, int item) const
{
    // A generator seeded from a hash of the inputs: independent of call order and timing.
    const std::array<quint32, 4> words = stableWords(QStringLiteral("%1|%2|%3|%4|%5")
                                                         .arg(m_seed)
                                                         .arg(downstream)
                                                         .arg(jobId)
                                                         .arg(attempt)
                                                         .arg(item));
    QRandomGenerator rng(words.data(), words.data() + words.size());

    const FaultRates rates = m_rates.value(downstream);
    Fault fault;
    const qint64 span = std::max<qint64>(0, rates.latencyMaxMs - rates.latencyMinMs);
    // Skewed towards fast calls, with a long tail.
    const double u = rng.generateDouble();
    fault.latencyMs = rates.latencyMinMs + qint64(double(span) * u * u * u);

    const auto forced = m_forced.constFind(forcedKey(downstream, jobId, attempt, item));
    if (forced != m_forced.constEnd()) {
        fault.kind = *forced;
        fault.retryAfterMs = rates.retryAfterMs;
        return fault;
    }
    for (const Outage &o : m_outages) {
        if (o.downstream == downstream && now >= o.start && now < o.end) {
            fault.kind = FaultKind::Outage;
            return fault;
        }
    }
    double roll = rng.generateDouble();
    const std::pair<double, FaultKind> table[] = {
        { rates.serverError, FaultKind::ServerError },
        { rates.rateLimited, FaultKind::RateLimited },
        { rates.connectionRefused, FaultKind::ConnectionRefused },
        { rates.timeoutBeforeSend, FaultKind::TimeoutBeforeSend },
        { rates.timeoutAfterEffect, FaultKind::TimeoutAfterEffect },
        { rates.crashAfterEffect, FaultKind::CrashAfterEffect },
        { rates.declined, FaultKind::Declined },
        { rates.validationError, FaultKind::ValidationError },
        { rates.serializationFailure, FaultKind::SerializationFailure },
    };
    for (const auto &[p, kind] : table) {
        if (roll < p) {
            fault.kind = kind;
            if (kind == FaultKind::RateLimited)
                fault.retryAfterMs = rates.retryAfterMs;
            return fault;
        }
        roll -= p;
    }
    return fault;
}

std::array<quint32, 4> stableWords(const QString &text)
{
    const QByteArray digest = QCryptographicHash::hash(text.toUtf8(), QCryptographicHash::Sha256);
    std::array<quint32, 4> words;
    for (size_t i = 0; i < words.size(); ++i)
        words[i] = qFromLittleEndian<quint32>(digest.constData() + 4 * i);
    return words;
}

} // namespace redrive::worker
