// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QWidget>

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QStandardItemModel;
class QTabWidget;
class QTreeView;

namespace redrive {

class DeadLetterCase;
struct JsonNode;

/// The case view's Payload tab: size and kind, a preview with "Load full payload", the JSON
/// as a tree (bounded: kMaxTreeNodes values, kMaxTreeChildren per container) and as raw text
/// (indented up to display::kMaxIndentDepth levels, or exactly as stored), and whether it is shown
/// as received or as the stored jsonb (duplicate keys named). Formatting and parsing run on a
/// pool thread; the text reaches the GUI thread as a finished QTextDocument. It reads the payload
/// from the DeadLetterCase it is given and asks it for the full payload.
class CasePayloadTab : public QWidget
{
    Q_OBJECT
public:
    CasePayloadTab(DeadLetterCase *deadLetterCase, QWidget *parent = nullptr);

    /// The JSON tree of the payload.
    QStandardItemModel *treeModel() const { return m_treeModel; }
    /// True while the payload is being loaded in full or formatted.
    bool isBusy() const { return m_busy; }

    /// The case's detail was (re)read: shows its payload, or keeps the pane as it is (text,
    /// tree, full payload, scroll position) when the payload did not change.
    void showDetailPayload();
    /// The full payload arrived (DeadLetterCase::fullPayloadLoaded).
    void showFullPayload(const QByteArray &bytes, bool isJson);
    /// Loading the full payload failed (the case view's banner says why).
    void fullPayloadFailed();
    /// F5: a full payload asked for before is not waited for any more.
    void forgetFullLoad() { m_fullLoading = false; }

private:
    struct RenderedPayload;

    /// True when a payload of the detail the re-read brings is the one shown: as received or
    /// not, JSON or not, the same size, and the same bytes (or the preview of the full payload
    /// already loaded).
    bool unchanged(bool received, const QByteArray &bytes, bool isJson, qint64 total) const;
    void renderHeader();
    void renderReceivedNote(const QStringList &duplicateKeys);
    void setBusy(bool busy);
    void startRender(bool withTree);
    void applyRendered(const RenderedPayload &rendered);
    void buildTree(const JsonNode &root);

    DeadLetterCase *m_case;
    QLabel *m_size = nullptr;
    QPushButton *m_loadFull = nullptr;
    QProgressBar *m_progress = nullptr;
    QTabWidget *m_views = nullptr;
    QTreeView *m_tree = nullptr;
    QStandardItemModel *m_treeModel = nullptr;
    QLabel *m_treeNote = nullptr;
    QPlainTextEdit *m_raw = nullptr;
    QCheckBox *m_indent = nullptr;
    QLabel *m_depthNote = nullptr;
    QLabel *m_receivedNote = nullptr;

    bool m_shown = false; ///< a payload of this dead letter is shown
    bool m_received = false; ///< m_bytes is the text as received
    QByteArray m_bytes;
    bool m_isJson = false;
    qint64 m_total = 0;
    quint64 m_renderTicket = 0;
    bool m_busy = false;
    bool m_fullLoading = false;
};

} // namespace redrive
