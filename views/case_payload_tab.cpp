// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/case_payload_tab.h"

#include "models/dead_letter_case.h"
#include "models/display_format.h"
#include "models/payload_text.h"
#include "views/text_panes.h"

#include <QCheckBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPlainTextDocumentLayout>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTextDocument>
#include <QThread>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <functional>

namespace redrive {

namespace {

enum PayloadView { TreeView, RawView };

/// The JSON tree shows at most this many values; the rest is counted in a visible note.
constexpr int kMaxTreeNodes = 20000;
/// A container in the tree lists at most this many entries; a "more" row stands for the rest.
constexpr int kMaxTreeChildren = 1000;
/// A string value in the tree shows at most this many characters (the Raw tab has all).
constexpr int kMaxTreeValueChars = 1000;
int countNodes(const JsonNode &node)
{
    int n = 1;
    for (const JsonNode &child : node.children)
        n += countNodes(child);
    return n;
}

QString typeName(JsonNode::Type type)
{
    switch (type) {
    case JsonNode::Type::Object:
        return CasePayloadTab::tr("object");
    case JsonNode::Type::Array:
        return CasePayloadTab::tr("array");
    case JsonNode::Type::String:
        return CasePayloadTab::tr("string");
    case JsonNode::Type::Number:
        return CasePayloadTab::tr("number");
    case JsonNode::Type::Bool:
        return CasePayloadTab::tr("boolean");
    case JsonNode::Type::Null:
        return CasePayloadTab::tr("null");
    }
    return {};
}

} // namespace

/// What the pool thread hands back: the text for the Raw tab and, when asked, the parsed tree.
struct CasePayloadTab::RenderedPayload
{
    PayloadText::Rendered rendered;
    /// The Raw tab's document, built on the pool thread and moved to the GUI thread: setting
    /// megabytes of text into a widget on the GUI thread would stall the window. Owned by whoever
    /// takes it (applyRendered(), or deleted when the render was replaced).
    QTextDocument *document = nullptr;
    QStringList duplicateKeys; ///< keys sent more than once in one object (PayloadText)
    std::optional<JsonNode> tree;
    QString treeError;
    bool treeRequested = false;
};

CasePayloadTab::CasePayloadTab(DeadLetterCase *deadLetterCase, QWidget *parent)
    : QWidget(parent)
    , m_case(deadLetterCase)
{
    auto *layout = new QVBoxLayout(this);
    auto *bar = new QHBoxLayout;
    m_size = new QLabel(this);
    m_size->setObjectName(QStringLiteral("payloadSize"));
    m_size->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_size->setTextFormat(Qt::PlainText);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("payloadProgress"));
    m_progress->setRange(0, 0); // busy: the size of what comes back is known, the time not
    m_progress->setMaximumWidth(160);
    m_progress->setTextVisible(false);
    m_progress->hide();
    m_loadFull = new QPushButton(this);
    m_loadFull->setObjectName(QStringLiteral("loadFullPayload"));
    m_loadFull->hide();
    connect(m_loadFull, &QPushButton::clicked, this, [this] {
        m_fullLoading = true;
        m_loadFull->setEnabled(false);
        m_loadFull->setText(tr("Loading full payload…"));
        setBusy(true);
        m_case->loadFullPayload();
    });
    m_indent = new QCheckBox(tr("Indent JSON"), this);
    m_indent->setObjectName(QStringLiteral("indentJson"));
    m_indent->setChecked(true);
    m_indent->setToolTip(tr("Off: the JSON text exactly as stored"));
    connect(m_indent, &QCheckBox::toggled, this, [this] { startRender(false); });
    bar->addWidget(m_size, 1);
    bar->addWidget(m_progress);
    bar->addWidget(m_loadFull);
    bar->addWidget(m_indent);
    layout->addLayout(bar);
    m_depthNote = panes::note(this, QStringLiteral("depthNote"));
    m_depthNote->setText(
        tr("Levels deeper than %1 are shown flat, without further indentation. Turn Indent JSON"
           " off for the text exactly as stored.")
            .arg(display::kMaxIndentDepth));
    m_depthNote->hide();
    layout->addWidget(m_depthNote);
    m_receivedNote = panes::note(this, QStringLiteral("receivedNote"));
    m_receivedNote->hide();
    layout->addWidget(m_receivedNote);

    m_views = new QTabWidget(this);
    m_views->setObjectName(QStringLiteral("payloadViews"));
    m_views->setDocumentMode(true);
    auto *treePage = new QWidget(m_views);
    auto *treeLayout = new QVBoxLayout(treePage);
    treeLayout->setContentsMargins(0, 4, 0, 0);
    m_treeNote = panes::note(treePage, QStringLiteral("treeNote"));
    m_treeNote->hide();
    m_treeModel = new QStandardItemModel(this);
    m_treeModel->setObjectName(QStringLiteral("payloadTreeModel"));
    m_tree = new QTreeView(treePage);
    m_tree->setObjectName(QStringLiteral("payloadTree"));
    m_tree->setModel(m_treeModel);
    m_tree->setUniformRowHeights(true);
    m_tree->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_tree->setAlternatingRowColors(true);
    m_tree->setSelectionBehavior(QAbstractItemView::SelectRows);
    treeLayout->addWidget(m_treeNote);
    treeLayout->addWidget(m_tree, 1);
    m_raw = panes::readOnlyText(m_views, QStringLiteral("rawPayload"));
    m_raw->setUndoRedoEnabled(false);
    m_views->addTab(treePage, tr("Tree"));
    m_views->addTab(m_raw, tr("Raw"));
    layout->addWidget(m_views, 1);
}

void CasePayloadTab::showDetailPayload()
{
    const auto detail = m_case->detail(); // a copy: keep it alive while d is used
    if (!detail)
        return;
    const DeadLetterCase::Detail &d = *detail;
    const bool received = d.payloadReceived.has_value();
    // The text as the producer sent it when the source kept it (duplicate keys and member
    // order included); otherwise the jsonb's text.
    const QByteArray bytes = received ? *d.payloadReceived : d.payload;
    const qint64 total = received ? bytes.size() : d.payloadSize;
    if (m_shown && unchanged(received, bytes, d.payloadIsJson, total)) {
        // A re-read (live, F5): keep the text, tree, full payload and scroll position.
        renderHeader();
        return;
    }
    m_shown = true;
    m_received = received;
    m_bytes = bytes;
    m_isJson = d.payloadIsJson;
    m_total = total;
    renderHeader();
    renderReceivedNote({});
    startRender(m_received || d.payloadComplete);
}

void CasePayloadTab::fullPayloadFailed()
{
    m_fullLoading = false;
    setBusy(false);
    renderHeader();
}

bool CasePayloadTab::unchanged(bool received, const QByteArray &bytes, bool isJson,
                               qint64 total) const
{
    if (received != m_received || isJson != m_isJson || total != m_total)
        return false;
    if (bytes == m_bytes)
        return true;
    // The full payload was loaded and the re-read brought its preview again: the same size and
    // the same first bytes.
    return !received && m_bytes.size() >= total && bytes.size() < total
        && m_bytes.startsWith(bytes);
}

void CasePayloadTab::showFullPayload(const QByteArray &bytes, bool isJson)
{
    m_fullLoading = false;
    m_received = false;
    m_bytes = bytes;
    m_isJson = isJson;
    m_total = bytes.size();
    renderHeader();
    startRender(true);
}

void CasePayloadTab::renderHeader()
{
    const bool complete = m_bytes.size() >= m_total;
    if (m_total == 0 && m_bytes.isEmpty()) {
        m_size->setText(tr("No payload."));
        m_loadFull->hide();
        return;
    }
    const QString what = m_isJson ? tr("JSON") : tr("Bytes");
    QString text = m_total < 1024
        ? tr("%1 · %2").arg(what, PayloadText::formatSize(m_total))
        : tr("%1 · %2 (%3)")
              .arg(what, PayloadText::formatSize(m_total), PayloadText::formatByteCount(m_total));
    if (!complete)
        text += tr(" — showing a preview of the first %1")
                    .arg(PayloadText::formatSize(m_bytes.size()));
    m_size->setText(text);
    m_loadFull->setVisible(!complete);
    if (!complete && !m_fullLoading) {
        m_loadFull->setEnabled(true);
        m_loadFull->setText(tr("Load full payload (%1)").arg(PayloadText::formatSize(m_total)));
    }
}

void CasePayloadTab::renderReceivedNote(const QStringList &duplicateKeys)
{
    const auto detail = m_case->detail();
    if (!detail || !detail->payloadIsJson) {
        m_receivedNote->hide();
        return;
    }
    QString text;
    if (m_received) {
        text = tr("Shown as received.");
        if (!duplicateKeys.isEmpty())
            text += QLatin1Char(' ')
                + tr("Keys merged: %1 sent more than once; the stored jsonb (what queries read and"
                     " a requeue sends) kept only the last value of each.")
                      .arg(display::boundedText(duplicateKeys.join(QStringLiteral(", ")), 300));
    } else if (detail->source == QLatin1String("native")) {
        text = tr("Shown as stored (jsonb): this job was enqueued as jsonb, so duplicate keys and"
                  " the key order as sent were not kept.");
    } else {
        text = tr("Shown as stored (jsonb): the job library of source %1 stores payloads as"
                  " jsonb, so duplicate keys and the key order as sent were not kept.")
                   .arg(detail->source);
    }
    m_receivedNote->setText(text);
    m_receivedNote->show();
}

void CasePayloadTab::setBusy(bool busy)
{
    m_busy = busy;
    m_progress->setVisible(busy);
}

void CasePayloadTab::startRender(bool withTree)
{
    const quint64 ticket = ++m_renderTicket;
    setBusy(true);
    const QByteArray bytes = m_bytes;
    const bool isJson = m_isJson;
    const qint64 total = m_total;
    const bool indent = m_indent->isChecked();
    const bool tree = withTree && isJson && bytes.size() >= total && total > 0;
    // Indenting, checking and hex-dumping megabytes takes long enough to stall the window:
    // do it on a pool thread and hand back the finished text.
    QThread *guiThread = thread();
    const QFont font = m_raw->font();
    QFuture<RenderedPayload> future
        = QtConcurrent::run([bytes, isJson, total, indent, tree, guiThread, font] {
              RenderedPayload out;
              out.rendered = PayloadText::render(bytes, isJson, total, indent);
              // QTextDocument is reentrant: filled here, then handed to the GUI thread, whose plain
              // text layout shapes only the lines in view.
              auto *document = new QTextDocument;
              document->setDocumentLayout(new QPlainTextDocumentLayout(document));
              document->setDefaultFont(font);
              document->setUndoRedoEnabled(false);
              // Hidden characters as markers, as in every read-only pane
              // (display::revealInvisible):
              // "\u202E0001\u202C" must not read "1000".
              document->setPlainText(out.rendered.kind == PayloadText::Kind::Empty
                                         ? CasePayloadTab::tr("(no payload)")
                                         : display::revealInvisible(out.rendered.text));
              document->moveToThread(guiThread);
              out.document = document;
              out.treeRequested = tree;
              if (tree && out.rendered.kind == PayloadText::Kind::Json) {
                  out.tree = PayloadText::parseJson(bytes, &out.treeError);
                  if (out.tree)
                      out.duplicateKeys = PayloadText::duplicateKeys(*out.tree);
              }
              return out;
          });
    auto *watcher = new QFutureWatcher<RenderedPayload>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, ticket] {
        watcher->deleteLater();
        const RenderedPayload result = watcher->result();
        if (ticket != m_renderTicket) {
            delete result.document;
            return; // a newer render replaced it
        }
        applyRendered(result);
        setBusy(m_fullLoading);
    });
    watcher->setFuture(future);
}

void CasePayloadTab::applyRendered(const RenderedPayload &r)
{
    const PayloadText::Kind kind = r.rendered.kind;
    m_indent->setEnabled(kind == PayloadText::Kind::Json);
    // The edit owns the document from now on, and deletes the one it replaces (its child too).
    r.document->setParent(m_raw);
    m_raw->setDocument(r.document);
    m_depthNote->setVisible(r.rendered.flattened);
    if (r.tree)
        renderReceivedNote(r.duplicateKeys);
    if (!r.treeRequested) {
        if (m_treeModel->rowCount() > 0 && kind == PayloadText::Kind::Json)
            return; // only the Raw text changed (indent toggled): keep the tree
        m_treeModel->clear();
        m_treeNote->setText(
            kind == PayloadText::Kind::Json
                ? tr("The tree needs the whole document: load the full payload, or read the"
                     " preview in Raw.")
                : tr("The payload is not JSON: see Raw."));
        m_treeNote->show();
        m_views->setTabEnabled(TreeView, false);
        m_views->setCurrentIndex(RawView);
        return;
    }
    if (!r.tree) {
        m_treeModel->clear();
        m_treeNote->setText(
            tr("The tree cannot show this payload (%1): see Raw.").arg(r.treeError));
        m_treeNote->show();
        m_views->setTabEnabled(TreeView, false);
        m_views->setCurrentIndex(RawView);
        return;
    }
    buildTree(*r.tree);
    m_views->setTabEnabled(TreeView, true);
    m_views->setCurrentIndex(TreeView);
}

void CasePayloadTab::buildTree(const JsonNode &root)
{
    m_treeModel->clear();
    m_treeModel->setHorizontalHeaderLabels({ tr("Name"), tr("Value"), tr("Type") });
    int budget = kMaxTreeNodes;
    int hidden = 0; // values left out of the tree (each counted with what it contains)
    const QBrush grey(QColor(0x6b, 0x6b, 0x6b));
    const QLocale locale;
    auto moreRow = [&](QStandardItem *parent, int entries, int values) {
        auto *more = new QStandardItem(tr("… %1 more (see Raw)").arg(locale.toString(entries)));
        more->setEditable(false);
        more->setForeground(grey);
        parent->appendRow(more);
        hidden += values;
    };

    std::function<void(QStandardItem *, const JsonNode &)> addChildren;
    std::function<void(QStandardItem *, const JsonNode &, const QString &)> add;
    add = [&](QStandardItem *parent, const JsonNode &node, const QString &name) {
        --budget;
        auto *nameItem = new QStandardItem(display::boundedText(name, kMaxTreeValueChars));
        auto *valueItem = new QStandardItem;
        auto *typeItem = new QStandardItem(typeName(node.type));
        typeItem->setForeground(grey);
        for (QStandardItem *item : { nameItem, valueItem, typeItem })
            item->setEditable(false);
        const qlonglong count = qlonglong(node.children.size());
        switch (node.type) {
        case JsonNode::Type::Object:
            valueItem->setText(count == 1 ? tr("{1 member}")
                                          : tr("{%1 members}").arg(locale.toString(count)));
            valueItem->setForeground(grey);
            break;
        case JsonNode::Type::Array:
            valueItem->setText(count == 1 ? tr("[1 item]")
                                          : tr("[%1 items]").arg(locale.toString(count)));
            valueItem->setForeground(grey);
            break;
        case JsonNode::Type::String: {
            // Counted like every other "more characters" (display::boundedText).
            QString shown = display::boundedText(node.value, kMaxTreeValueChars);
            shown.replace(QLatin1Char('\n'), QStringLiteral("↵"));
            valueItem->setText(shown);
            valueItem->setToolTip(display::plainToolTip(node.value));
            break;
        }
        default:
            valueItem->setText(node.value);
            valueItem->setFont(panes::monospace());
            break;
        }
        // Children first, while the row is not in the model yet: no signal per nested value.
        addChildren(nameItem, node);
        parent->appendRow({ nameItem, valueItem, typeItem });
    };
    // Each container shows its first kMaxTreeChildren entries, and all of them together at most
    // kMaxTreeNodes values; what is left out is named in a row where it would have been.
    addChildren = [&](QStandardItem *parent, const JsonNode &node) {
        const std::size_t n = node.children.size();
        std::size_t i = 0;
        for (; i < n && i < std::size_t(kMaxTreeChildren) && budget > 0; ++i) {
            const JsonNode &child = node.children[i];
            add(parent, child,
                node.type == JsonNode::Type::Array ? QStringLiteral("[%1]").arg(i) : child.key);
        }
        if (i < n) {
            int values = 0;
            for (std::size_t k = i; k < n; ++k)
                values += countNodes(node.children[k]);
            moreRow(parent, int(n - i), values);
        }
    };

    QStandardItem *top = m_treeModel->invisibleRootItem();
    if (root.type == JsonNode::Type::Object || root.type == JsonNode::Type::Array)
        addChildren(top, root);
    else
        add(top, root, tr("(value)"));
    const int shown = kMaxTreeNodes - budget;
    if (hidden > 0) {
        m_treeNote->setText(tr("The tree shows %1 of %2 values: long arrays and objects show"
                               " their first %3 entries, and rows marked \"more\" stand for the"
                               " rest. The Raw tab has everything.")
                                .arg(locale.toString(shown), locale.toString(shown + hidden),
                                     locale.toString(kMaxTreeChildren)));
        m_treeNote->show();
    } else {
        m_treeNote->hide();
    }
    m_tree->header()->setSectionResizeMode(QHeaderView::Interactive);
    m_tree->header()->resizeSection(0, 260);
    m_tree->header()->resizeSection(1, 520);
    if (shown <= 2000)
        m_tree->expandToDepth(1);
    else
        m_tree->expandToDepth(0);
}

} // namespace redrive
