// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayView>
#include <QString>

namespace redrive::db {

/// `size` bytes of UTF-8 at `data` as a QString, every character kept: QString::fromUtf8 drops a
/// byte order mark (U+FEFF) at the start, so a key "\uFEFFk1" read that way became "k1", was shown
/// as another key's twin and sent back as that other key (docs/security.md#text-from-the-
/// database-is-plain-text). Each leading U+FEFF is kept as a character (the display shows it as a
/// marker); the rest is QString::fromUtf8.
inline QString textFromUtf8(const char *data, qsizetype size)
{
    QString out;
    while (size >= 3 && static_cast<unsigned char>(data[0]) == 0xEF
           && static_cast<unsigned char>(data[1]) == 0xBB
           && static_cast<unsigned char>(data[2]) == 0xBF) {
        out.append(QChar(0xFEFF));
        data += 3;
        size -= 3;
    }
    return out.isEmpty() ? QString::fromUtf8(data, size) : out + QString::fromUtf8(data, size);
}

inline QString textFromUtf8(QByteArrayView bytes)
{
    return textFromUtf8(bytes.data(), bytes.size());
}

} // namespace redrive::db
