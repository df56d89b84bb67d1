// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/logging.h"

Q_LOGGING_CATEGORY(lcDb, "redrive.db", QtInfoMsg)
Q_LOGGING_CATEGORY(lcModel, "redrive.model", QtInfoMsg)
Q_LOGGING_CATEGORY(lcUi, "redrive.ui", QtInfoMsg)
Q_LOGGING_CATEGORY(lcWorker, "redrive.worker", QtInfoMsg)
