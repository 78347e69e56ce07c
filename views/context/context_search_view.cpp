#include "views/context/context_search_view.h"

#include "views/widgets/figure_painter.h"
#include "views/data/inspection_state.h"
#include "views/data/token_label.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace attnscope::views {
namespace {

enum Column { kCosine, kBefore, kToken, kAfter, kLookedAt, kColumns };

QString corpusText(const std::string& bytes) {
    QString text = QString::fromUtf8(bytes.data(), static_cast<int>(bytes.size()));
    text.replace(QLatin1Char('\t'), QLatin1Char(' '));
    return text;
}

}  // namespace

ContextSearchView::ContextSearchView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(9, 6, 9, 6);
    auto* bar = new QWidget(this);  // (left out of figures, as the status under it)
    bar->setProperty(FigurePainter::kSkipProperty, true);
    auto* controls = new QHBoxLayout(bar);
    controls->setContentsMargins(0, 0, 0, 0);
    m_choose = new QPushButton(tr("Choose Corpus…"), bar);
    m_choose->setToolTip(tr("A UTF-8 text file: the open model reads it once; the index is kept beside the model for next time"));
    controls->addWidget(m_choose);
    m_corpusLabel = new QLabel(tr("no corpus"), bar);
    m_corpusLabel->setMinimumWidth(80);
    controls->addWidget(m_corpusLabel, 1);
    controls->addWidget(new QLabel(tr("Compare"), bar));
    m_space = new QComboBox(bar);
    m_space->addItem(tr("Hidden states"), static_cast<int>(engine::ContextSpace::Hidden));
    m_space->addItem(tr("Keys (head)"), static_cast<int>(engine::ContextSpace::Keys));
    m_space->addItem(tr("Queries (head)"), static_cast<int>(engine::ContextSpace::Queries));
    m_space->setToolTip(tr("Hidden states: what the layer writes (its output), as exBERT compares.\n"
                           "Keys or queries: the selected head's own vectors at this layer."));
    controls->addWidget(m_space);
    controls->addWidget(new QLabel(tr("Token"), bar));
    m_token = new QSpinBox(bar);
    m_token->setRange(0, 0);
    m_token->setToolTip(tr("The token of the text searched for (hovering the heatmap or Links picks it too)"));
    controls->addWidget(m_token);
    m_reindex = new QPushButton(tr("Index Again"), bar);
    m_reindex->setToolTip(tr("Read the corpus with the model again instead of the kept index"));
    controls->addWidget(m_reindex);
    m_progress = new QProgressBar(bar);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(140);
    m_progress->setFormat(tr("indexing %p%"));
    m_progress->hide();
    controls->addWidget(m_progress);
    m_cancel = new QPushButton(tr("Cancel"), bar);
    m_cancel->hide();
    controls->addWidget(m_cancel);
    layout->addWidget(bar);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);
    m_title = new QLabel(this);
    QFont bold = m_title->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    m_title->setFont(bold);
    m_title->setWordWrap(true);
    layout->addWidget(m_title);
    m_message = new QLabel(this);
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    layout->addWidget(m_message);
    m_table = new QTableWidget(0, kColumns, this);
    m_table->setHorizontalHeaderLabels({tr("cosine"), tr("before"), tr("token"), tr("after"), tr("it looked at (weight)")});
    m_table->horizontalHeaderItem(kLookedAt)->setToolTip(tr("The corpus token's own strongest key in the selected head at this layer"));
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setWordWrap(false);
    m_table->setShowGrid(false);
    m_table->setAlternatingRowColors(true);
    m_table->horizontalHeader()->setSectionResizeMode(kCosine, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(kBefore, QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(kToken, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(kAfter, QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(kLookedAt, QHeaderView::ResizeToContents);
    layout->addWidget(m_table, 1);
    // A figure is the title (a label: drawn as text) and the list as drawn; the controls and the
    // index's status stay out.
    m_table->setProperty(FigurePainter::kRenderProperty, true);
    m_status->setProperty(FigurePainter::kSkipProperty, true);
    showTable(false);
    setMessage(tr("Context search finds, in a corpus you choose, the tokens the open model represents most like the "
                  "selected token. Open a model, run one of its layers, then choose a corpus."));

    connect(m_choose, &QPushButton::clicked, this, &ContextSearchView::chooseCorpus);
    connect(m_space, &QComboBox::currentIndexChanged, this, &ContextSearchView::spaceChanged);
    connect(m_reindex, &QPushButton::clicked, this, &ContextSearchView::reindexRequested);
    connect(m_cancel, &QPushButton::clicked, this, &ContextSearchView::cancelRequested);
    connect(m_token, &QSpinBox::valueChanged, this, &ContextSearchView::searchWanted);
}

void ContextSearchView::setInspectionState(InspectionState* state) {
    followInspectionState(this, m_state, state, [this] { Q_EMIT searchWanted(); });
    if (m_state)
        connect(m_state, &InspectionState::hoveredChanged, this, [this](int query, int) {
            if (query >= 0 && query != m_token->value() && query <= m_token->maximum()) setQuery(query);
        });
}

void ContextSearchView::setResult(Run result) {
    m_result = std::move(result);
    {
        const QSignalBlocker quiet(m_token);
        m_token->setRange(0, m_result ? static_cast<int>(std::max<std::int64_t>(m_result->n - 1, 0)) : 0);
    }
    Q_EMIT searchWanted();
}

void ContextSearchView::setQuery(int token) { m_token->setValue(std::clamp(token, 0, m_token->maximum())); }
int ContextSearchView::query() const { return m_token->value(); }
int ContextSearchView::head() const { return m_state ? m_state->head() : 0; }

engine::ContextSpace ContextSearchView::space() const { return static_cast<engine::ContextSpace>(m_space->currentData().toInt()); }

void ContextSearchView::setSpace(engine::ContextSpace space) {
    m_space->setCurrentIndex(std::max(0, m_space->findData(static_cast<int>(space))));
}

void ContextSearchView::setCorpus(const QString& path) {
    m_corpusPath = path;
    m_corpusLabel->setText(path.isEmpty() ? tr("no corpus") : QFileInfo(path).fileName());
    m_corpusLabel->setToolTip(path);
}

void ContextSearchView::setIndexing(bool busy, int permille) {
    m_progress->setVisible(busy);
    m_cancel->setVisible(busy);
    m_progress->setValue(permille);
    m_choose->setEnabled(!busy);
    m_reindex->setEnabled(!busy && !m_corpusPath.isEmpty());
}

void ContextSearchView::setStatus(const QString& text) { m_status->setText(text); }
QString ContextSearchView::status() const { return m_status->text(); }
QString ContextSearchView::title() const { return m_title->text(); }

void ContextSearchView::setMatches(const std::vector<engine::ContextMatch>& matches, const QString& title) {
    m_matches = matches;
    m_title->setText(title);
    m_table->setRowCount(static_cast<int>(matches.size()));
    const QColor tokenColor = palette().color(QPalette::Highlight);
    for (int row = 0; row < static_cast<int>(matches.size()); ++row) {
        const engine::ContextMatch& match = matches[static_cast<std::size_t>(row)];
        auto* cosine = new QTableWidgetItem(QString::number(match.cosine, 'f', 3));
        cosine->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto* before = new QTableWidgetItem(corpusText(match.before));
        before->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);  // (keyword in context: the token column lines up)
        auto* token = new QTableWidgetItem(corpusText(match.text));
        QFont bold = token->font();
        bold.setBold(true);
        token->setFont(bold);
        token->setForeground(tokenColor);
        token->setTextAlignment(Qt::AlignCenter);
        auto* after = new QTableWidgetItem(corpusText(match.after));
        const QString lookedAt = match.peek.key < 0 ? tr("—")
                                                    : QStringLiteral("‘%1’ (%2)").arg(tokenLabel(match.peekText)).arg(match.peek.weight, 0, 'f', 2);
        m_table->setItem(row, kCosine, cosine);
        m_table->setItem(row, kBefore, before);
        m_table->setItem(row, kToken, token);
        m_table->setItem(row, kAfter, after);
        m_table->setItem(row, kLookedAt, new QTableWidgetItem(lookedAt));
    }
    // the before column elides on its left, where the context is furthest from the token
    m_table->setTextElideMode(Qt::ElideLeft);
    showTable(!matches.empty());
    if (matches.empty()) m_message->setText(tr("No corpus token to compare with (the corpus holds only the model's special tokens)."));
}

void ContextSearchView::setMessage(const QString& text) {
    m_matches.clear();
    m_title->clear();
    m_message->setText(text);
    showTable(false);
}

void ContextSearchView::showTable(bool shown) {
    m_table->setVisible(shown);
    m_message->setVisible(!shown);
    m_title->setVisible(shown);
}

void ContextSearchView::chooseCorpus() {
    const QString start = m_corpusPath.isEmpty() ? QString() : QFileInfo(m_corpusPath).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Choose a Corpus"), start, tr("Text files (*.txt *.md);;All files (*)"));
    if (!path.isEmpty()) Q_EMIT corpusChosen(path);
}

}  // namespace attnscope::views
