// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/meta_types.h"

#include "models/db/connection_settings.h"
#include "models/db/db_error.h"
#include "models/db/pg_connection.h"
#include "models/db/query_params.h"
#include "models/db/result_set.h"

namespace redrive::db {

void registerMetaTypes()
{
    qRegisterMetaType<DbError>();
    qRegisterMetaType<QueryParams>();
    qRegisterMetaType<ResultSet>();
    qRegisterMetaType<ServerInfo>();
    qRegisterMetaType<Notification>();
    qRegisterMetaType<ReplayStatus>();
    qRegisterMetaType<ConnectionSettings>();
}

} // namespace redrive::db
