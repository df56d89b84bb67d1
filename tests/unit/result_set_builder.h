// SPDX-License-Identifier: GPL-3.0-or-later
// Builds a db::ResultSet in memory (libpq's PQmakeEmptyPGresult and PQsetvalue), so models'
// column and paging logic can be tested without a server.
#pragma once

#include "models/db/result_set.h"

#include <QByteArray>
#include <QList>
#include <libpq-fe.h>
#include <optional>

namespace redrive::test {

/// A result with columns `names` (all sent as text, as the console requests them) and `rows`;
/// std::nullopt is SQL NULL.
inline db::ResultSet makeResult(const QList<QByteArray> &names,
                                const QList<QList<std::optional<QByteArray>>> &rows)
{
    PGresult *result = PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK);
    QList<PGresAttDesc> attributes;
    for (const QByteArray &name : names) {
        PGresAttDesc d {};
        d.name = const_cast<char *>(name.constData()); // PQsetResultAttrs copies it
        d.typid = 25; // text
        d.typlen = -1;
        d.atttypmod = -1;
        attributes.append(d);
    }
    PQsetResultAttrs(result, int(attributes.size()), attributes.data());
    for (int r = 0; r < rows.size(); ++r) {
        for (int c = 0; c < rows.at(r).size(); ++c) {
            const std::optional<QByteArray> &cell = rows.at(r).at(c);
            QByteArray value = cell.value_or(QByteArray());
            PQsetvalue(result, r, c, cell ? value.data() : nullptr, cell ? int(value.size()) : -1);
        }
    }
    return db::ResultSet(result);
}

} // namespace redrive::test
