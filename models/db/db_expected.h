// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_error.h"

#include <utility>
#include <variant>

namespace redrive::db {

/// Either a value or the DbError that prevented it (C++20 has no std::expected yet).
/// The database layer returns these instead of throwing, so nothing is thrown across a thread.
template<class T>
class DbExpected
{
public:
    DbExpected(T value)
        : m_state(std::move(value))
    { }
    DbExpected(DbError error)
        : m_state(std::move(error))
    { }

    bool ok() const { return std::holds_alternative<T>(m_state); }
    explicit operator bool() const { return ok(); }

    /// The value; only valid when ok().
    T &value() { return std::get<T>(m_state); }
    const T &value() const { return std::get<T>(m_state); }
    T &operator*() { return value(); }
    const T &operator*() const { return value(); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }

    /// The error; only valid when !ok().
    const DbError &error() const { return std::get<DbError>(m_state); }

private:
    std::variant<T, DbError> m_state;
};

} // namespace redrive::db
