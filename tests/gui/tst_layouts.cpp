// SPDX-License-Identifier: GPL-3.0-or-later
// Every tab at 1024x700 and at 1920x1200, against a real PostgreSQL with rows in each tab: the
// window takes the size it is given (no tab's minimum widens it), no button, label or input is
// cut off or overlaps its neighbour, the tables get the space at the large size, and each tab
// is saved as PNG in test-output/ for a person to look at.
#include "models/dead_letter_model.h"
#include "models/stuck_key_model.h"
#include "tests/support/test_database.h"
#include "views/idempotency_keys_widget.h"
#include "views/main_window.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractScrollArea>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLayout>
#include <QLineEdit>
#include <QTabWidget>
#include <QTest>

using namespace redrive;

namespace {

const char kSeed[] = R"sql(
INSERT INTO redrive.job (queue, kind, payload, state, entity_id)
SELECT (ARRAY['payments','emails'])[1 + g % 2], (ARRAY['charge_card','send_receipt'])[1 + g % 2],
       jsonb_build_object('n', g), 'dead', 'pay_' || g
  FROM generate_series(1, 60) g;
INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code, last_error,
                                 attempts, idempotency_key, dead_at)
SELECT j.id, j.queue, j.kind, CASE WHEN j.id % 3 = 0 THEN 'permanent' ELSE 'transient' END,
       CASE WHEN j.id % 3 = 0 THEN 'card_declined' ELSE 'provider_5xx' END,
       CASE WHEN j.id % 3 = 0 THEN '402 card_declined for payment pay_' || j.id
            ELSE '502 Bad Gateway from POST /v1/charges after ' || j.id || ' ms' END,
       1 + j.id % 8, 'charge:pay_' || j.id, now() - j.id * interval '1 minute'
  FROM redrive.job j;
INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, locked_by, locked_until)
VALUES ('charge_card', 'charge:stuck', repeat('c', 64), 'processing', 'w-dead',
        clock_timestamp() - interval '2 hours');
)sql";

QString outputPath(const QString &name)
{
    QDir().mkpath(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR));
    return QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + QLatin1Char('/') + name;
}

// True when `w` sits inside a scroll area's viewport below `page` (it may then extend past the
// visible part on purpose).
bool insideScrollArea(const QWidget *w, const QWidget *page)
{
    for (const QWidget *p = w->parentWidget(); p && p != page; p = p->parentWidget())
        if (qobject_cast<const QAbstractScrollArea *>(p))
            return true;
    return false;
}

QString describe(const QWidget *w)
{
    QString text;
    if (const auto *label = qobject_cast<const QLabel *>(w))
        text = label->text();
    else if (const auto *button = qobject_cast<const QAbstractButton *>(w))
        text = button->text();
    return QStringLiteral("%1 '%2' %3 \"%4\"")
        .arg(QString::fromLatin1(w->metaObject()->className()), w->objectName())
        .arg(QStringLiteral("%1,%2 %3x%4").arg(w->x()).arg(w->y()).arg(w->width()).arg(w->height()),
             text.left(60));
}

} // namespace

class TestLayouts : public QObject
{
    Q_OBJECT

    std::unique_ptr<test::TestDatabase> m_db;
    std::unique_ptr<MainWindow> m_window;

    // What is wrong with the current tab's layout at the window's size; empty when nothing.
    QStringList problems(QWidget *page)
    {
        QStringList out;
        const QRect pageRect = page->rect();
        for (QWidget *w : page->findChildren<QWidget *>()) {
            if (!w->isVisibleTo(page) || insideScrollArea(w, page) || w->width() <= 0)
                continue;
            const bool control = qobject_cast<QLabel *>(w) || qobject_cast<QAbstractButton *>(w)
                || qobject_cast<QLineEdit *>(w) || qobject_cast<QComboBox *>(w);
            if (!control)
                continue;
            const QRect inPage(w->mapTo(page, QPoint(0, 0)), w->size());
            if (!pageRect.contains(inPage))
                out << QStringLiteral("outside the tab: ") + describe(w);
            // Text cut off: a button or a one-line label narrower than its own text.
            const auto *label = qobject_cast<QLabel *>(w);
            const bool oneLineLabel = label && !label->wordWrap() && label->pixmap().isNull();
            if ((qobject_cast<QAbstractButton *>(w) || oneLineLabel)
                && w->minimumSizeHint().width() > w->width())
                out << QStringLiteral("text cut off (needs %1 px): ")
                            .arg(w->minimumSizeHint().width())
                        + describe(w);
        }
        // Neighbours in one layout never overlap.
        for (QWidget *parent : page->findChildren<QWidget *>()) {
            if (!parent->isVisibleTo(page) || insideScrollArea(parent, page))
                continue;
            QList<QWidget *> kids;
            for (QObject *o : parent->children())
                if (auto *k = qobject_cast<QWidget *>(o); k && !k->isWindow()
                    && k->isVisibleTo(page) && k->width() > 0 && k->height() > 0)
                    kids << k;
            for (int i = 0; i < kids.size(); ++i)
                for (int j = i + 1; j < kids.size(); ++j)
                    if (kids[i]->geometry().intersects(kids[j]->geometry())
                        && !kids[i]->geometry().contains(kids[j]->geometry())
                        && !kids[j]->geometry().contains(kids[i]->geometry()))
                        out << QStringLiteral("overlap: ") + describe(kids[i])
                                + QStringLiteral(" / ") + describe(kids[j]);
        }
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("layouts"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        QVERIFY(m_db->connect().execScript(kSeed).ok());
        m_window = std::make_unique<MainWindow>();
        m_window->setPromptsAllowed(false);
        m_window->resize(1024, 700);
        m_window->show();
        m_window->connectTo(m_db->settings());
        QTRY_VERIFY_WITH_TIMEOUT(m_window->schemaReady(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(m_window->deadLetterModel()->rowCount(), 60, 10000);
        auto *keys = m_window->findChild<IdempotencyKeysWidget *>();
        QVERIFY(keys);
        QTRY_COMPARE_WITH_TIMEOUT(keys->stuckKeyModel()->rowCount(), 1, 10000);
    }

    void everyTabFits_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1024x700") << QSize(1024, 700);
        QTest::newRow("1920x1200") << QSize(1920, 1200);
    }
    void everyTabFits()
    {
        QFETCH(QSize, size);
        auto *tabs = m_window->findChild<QTabWidget *>();
        QVERIFY(tabs);
        QStringList all;
        for (int t = 0; t < tabs->count(); ++t) {
            tabs->setCurrentIndex(t);
            m_window->resize(size);
            QTest::qWait(300); // layouts settle, the overview draws
            const QString name = tabs->tabText(t);
            // The window takes the size it was given: no tab's minimum widens it.
            if (m_window->size() != size) {
                // Name the widgets that ask for more than the window was given.
                QStringList wide;
                for (QWidget *c : m_window->findChildren<QWidget *>())
                    if (c->isVisibleTo(m_window.get())
                        && c->minimumSizeHint().width() > size.width() - 20)
                        wide << QString::fromLatin1(c->metaObject()->className()) + QLatin1Char(' ')
                                + QString::number(c->minimumSizeHint().width());
                all << QStringLiteral("%1: the window is %2x%3 (%4)")
                           .arg(name)
                           .arg(m_window->width())
                           .arg(m_window->height())
                           .arg(wide.join(QStringLiteral(", ")));
            }
            for (const QString &p : problems(tabs->currentWidget()))
                all << name + QStringLiteral(": ") + p;
            // At the large size the views take the space: together they cover at least half the
            // tab.
            if (size.width() >= 1920) {
                qint64 area = 0;
                for (QAbstractItemView *v :
                     tabs->currentWidget()->findChildren<QAbstractItemView *>())
                    if (v->isVisibleTo(tabs->currentWidget()))
                        area += qint64(v->width()) * v->height();
                const qint64 page
                    = qint64(tabs->currentWidget()->width()) * tabs->currentWidget()->height();
                if (name != QStringLiteral("Overview") && area * 2 < page)
                    all << QStringLiteral("%1: the tables use %2% of the tab")
                               .arg(name)
                               .arg(area * 100 / page);
            }
            QString file = name.toLower().replace(QLatin1Char(' '), QLatin1Char('_'));
            m_window->grab().save(outputPath(QStringLiteral("layout_%1_%2x%3.png")
                                                 .arg(file)
                                                 .arg(size.width())
                                                 .arg(size.height())));
        }
        tabs->setCurrentIndex(0);
        QVERIFY2(all.isEmpty(), qPrintable(all.join(QLatin1Char('\n'))));
    }

    void cleanupTestCase() { m_window.reset(); }
};

QTEST_MAIN(TestLayouts)
#include "tst_layouts.moc"
