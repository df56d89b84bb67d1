// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QLoggingCategory>

// One category per area. Never log parameter values or payloads.
Q_DECLARE_LOGGING_CATEGORY(lcDb) // redrive.db
Q_DECLARE_LOGGING_CATEGORY(lcModel) // redrive.model
Q_DECLARE_LOGGING_CATEGORY(lcUi) // redrive.ui
Q_DECLARE_LOGGING_CATEGORY(lcWorker) // redrive.worker
