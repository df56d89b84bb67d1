// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QLabel>

namespace redrive {

/// A one-line plain-text label that may be narrower than its text: it then shows the text cut
/// with an ellipsis at the end, and its tooltip starts with the whole text. Its
/// minimum width is an ellipsis, so a row of them never makes the window wider than the screen
/// (the status bar at 1024 px).
class ElidedLabel : public QLabel
{
    Q_OBJECT
public:
    explicit ElidedLabel(const QString &text = {}, QWidget *parent = nullptr);

    QSize minimumSizeHint() const override;
    /// True when the text does not fit the label's width and is shown cut.
    bool isElided() const;

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;
};

} // namespace redrive
