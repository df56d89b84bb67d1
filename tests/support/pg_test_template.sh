#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Creates redrive_template in the test cluster with `redrive migrate` (the real command-line mode),
# so every database test can clone a freshly migrated database of its own in milliseconds.
#   pg_test_template.sh DIR REDRIVE_EXECUTABLE
set -euo pipefail
dir=${1:?usage: pg_test_template.sh DIR REDRIVE}
redrive=${2:?usage: pg_test_template.sh DIR REDRIVE}
set -a
. "$dir/env"
set +a
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c 'DROP DATABASE IF EXISTS redrive_template' \
     -c 'CREATE DATABASE redrive_template'
"$redrive" migrate --conninfo "dbname=redrive_template"
# Applying it a second time must change nothing and say so.
"$redrive" migrate --conninfo "dbname=redrive_template" | grep -q 'up to date'
psql -X -q -v ON_ERROR_STOP=1 -d postgres \
     -c "ALTER DATABASE redrive_template WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"
echo "pg_test_template: redrive_template migrated"
