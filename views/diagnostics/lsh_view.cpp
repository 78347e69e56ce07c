#include "views/diagnostics/lsh_view.h"

#include <attnscope/diagnostics.h>

#include "views/diagnostics/categorical_palette.h"
#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnscope::views {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMaxBoundaryLines = 512;  // more chunk boundaries than this would paint the panel black
constexpr int kMaxChunkLines = 4096;    // lines of the "which chunk sees which" text

QCustomPlot* makeStripPlot(QWidget* parent, const QString& xLabel) {
    auto* plot = new QCustomPlot(parent);
    styleDiagnosticPlot(plot);
    QFont titleFont = plot->font();
    titleFont.setBold(true);
    auto* title = new QCPTextElement(plot, QString(), titleFont);
    title->setTextColor(plot->palette().color(QPalette::Text));
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, title);
    auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
    map->setInterpolate(false);
    map->setTightBoundary(false);  // whole cells at the edges (true halves the first and last)
    plot->xAxis->setLabel(xLabel);
    plot->yAxis->setRangeReversed(true);  // round 0 on top
    plot->yAxis->grid()->setVisible(false);
    plot->xAxis->grid()->setVisible(false);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeZoom(Qt::Horizontal);
    plot->axisRect()->setRangeDrag(Qt::Horizontal);
    return plot;
}

QCPColorMap* mapOf(QCustomPlot* plot) { return static_cast<QCPColorMap*>(plot->plottable(0)); }
QCPTextElement* titleOf(QCustomPlot* plot) { return static_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0)); }

double cellOf(QCustomPlot* plot, int row, int col) {
    QCPColorMapData* data = mapOf(plot)->data();
    if (row < 0 || col < 0 || col >= data->keySize() || row >= data->valueSize()) return kNaN;
    return data->cell(col, row);
}

void setRoundTicks(QCustomPlot* plot, int rounds) {
    auto ticker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    for (int r = 0; r < rounds; ++r) ticker->addTick(r, QObject::tr("round %1").arg(r));
    plot->yAxis->setTicker(ticker);
    plot->yAxis->setSubTicks(false);
    plot->yAxis->setRange(-0.5, rounds - 0.5);
}

}  // namespace

LshView::LshView(QWidget* parent) : ResultPage(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_info = new QLabel(this);
    m_info->setTextFormat(Qt::PlainText);
    m_info->setWordWrap(true);
    m_info->setContentsMargins(8, 4, 8, 2);
    auto* infoRow = new QHBoxLayout;
    infoRow->setContentsMargins(0, 4, 8, 0);
    infoRow->addWidget(m_info, 1);
    m_suggest = new QPushButton(this);
    m_suggest->setProperty("attnscopeExportSkip", true);  // a control, not part of a figure
    m_suggest->hide();
    connect(m_suggest, &QPushButton::clicked, this, [this] { Q_EMIT settingSuggested(QStringLiteral("reformer"), m_suggestion); });
    infoRow->addWidget(m_suggest, 0, Qt::AlignTop);
    layout->addLayout(infoRow);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    m_bucketPlot = makeStripPlot(splitter, tr("position"));
    m_sortedPlot = makeStripPlot(splitter, tr("slot in sorted order (lines: chunk boundaries)"));
    m_chunks = new QPlainTextEdit(splitter);
    m_chunks->setReadOnly(true);
    // Wrapped at the panel's width: the explanation is one long line (it ran off to the right).
    m_chunks->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    splitter->addWidget(m_bucketPlot);
    splitter->addWidget(m_sortedPlot);
    splitter->addWidget(m_chunks);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 2);
    splitter->setStretchFactor(2, 1);
    layout->addWidget(splitter, 1);
    rebuild();
}

LshView::~LshView() = default;

void LshView::showMessage(const QString& text) {
    m_suggest->hide();
    m_shownHead = -1;
    m_rounds = m_buckets = m_slots = m_chunkLen = m_chunkCount = 0;
    m_sorted.clear();
    for (QCustomPlot* plot : {m_bucketPlot, m_sortedPlot}) {
        mapOf(plot)->data()->clear();
        plot->clearItems();
        titleOf(plot)->setText(QString());
        replotWhenShown(plot);
    }
    m_chunks->clear();
    m_info->setText(text);
}

void LshView::rebuild() {
    if (!m_result) return showMessage(tr("No result yet."));
    const engine::AttentionResult* r =
        engine::resultForPage(*m_result, m_state ? m_state->resultIndex() : 0, engine::DiagnosticsPage::Lsh);
    if (!r) return showMessage(tr("The LSH view shows Reformer's hashing: choose the reformer variant and run."));
    const auto lsh = engine::readLsh(*r);
    if (!lsh) return showMessage(tr("This %1 result has no stored buckets.").arg(QString::fromStdString(r->variantId)));
    const engine::PlainTensor* buckets = lsh->buckets;

    // buckets: [H, rounds, n] bucket within the round, 0 … n_buckets − 1
    const auto heads = static_cast<int>(buckets->shape[0]);
    m_rounds = static_cast<int>(buckets->shape[1]);
    const auto n = static_cast<int>(buckets->shape[2]);
    const int head = std::clamp(m_state ? m_state->head() : 0, 0, heads - 1);
    m_shownHead = head;
    const std::int64_t* b = buckets->i64.data() + static_cast<std::size_t>(head) * m_rounds * n;
    const long long largest = *std::max_element(b, b + static_cast<std::ptrdiff_t>(m_rounds) * n);
    m_buckets = static_cast<int>(std::max<long long>(resultParamInt(*r, "n_buckets", 0), largest + 1));
    m_chunkLen = static_cast<int>(std::max<long long>(1, resultParamInt(*r, "chunk_len", n)));
    m_before = static_cast<int>(resultParamInt(*r, "n_chunks_before", 1));
    m_after = static_cast<int>(resultParamInt(*r, "n_chunks_after", 0));

    // sorted: [rounds, slots]; the engine's rule when not stored: stable by (bucket, position),
    // chunk padding (-1) after the last bucket of each round.
    const engine::PlainTensor* sorted = lsh->sorted;
    if (sorted) {
        m_slots = static_cast<int>(sorted->shape[2]);
        const auto* s = sorted->i64.data() + static_cast<std::size_t>(head) * m_rounds * m_slots;
        m_sorted.assign(s, s + static_cast<std::ptrdiff_t>(m_rounds) * m_slots);
    } else {
        m_slots = (n + m_chunkLen - 1) / m_chunkLen * m_chunkLen;
        m_sorted.assign(static_cast<std::size_t>(m_rounds) * m_slots, -1);
        std::vector<long long> order(static_cast<std::size_t>(n));
        for (int round = 0; round < m_rounds; ++round) {
            std::iota(order.begin(), order.end(), 0);
            const std::int64_t* rb = b + static_cast<std::ptrdiff_t>(round) * n;
            std::stable_sort(order.begin(), order.end(), [&](long long x, long long y) { return rb[x] < rb[y]; });
            std::copy(order.begin(), order.end(), m_sorted.begin() + static_cast<std::ptrdiff_t>(round) * m_slots);
        }
    }
    m_chunkCount = m_rounds * m_slots / m_chunkLen;

    const QCPColorGradient gradient = categoricalGradient(CategoricalPalette::standard(), m_buckets);
    const QCPRange range(0, std::max(1, m_buckets - 1));
    auto fill = [&](QCustomPlot* plot, int cols, auto value) {
        QCPColorMap* map = mapOf(plot);
        map->data()->setSize(cols, m_rounds);
        map->data()->setRange(QCPRange(0, cols - 1), QCPRange(0, m_rounds - 1));
        for (int round = 0; round < m_rounds; ++round)
            for (int c = 0; c < cols; ++c) map->data()->setCell(c, round, value(round, c));
        map->setGradient(gradient);
        map->setDataRange(range);
        plot->xAxis->setRange(-0.5, cols - 0.5);
        setRoundTicks(plot, m_rounds);
    };
    fill(m_bucketPlot, n, [&](int round, int pos) { return static_cast<double>(b[static_cast<std::ptrdiff_t>(round) * n + pos]); });
    fill(m_sortedPlot, m_slots, [&](int round, int slot) {
        const long long token = m_sorted[static_cast<std::size_t>(round) * m_slots + slot];
        return token < 0 || token >= n ? kNaN : static_cast<double>(b[static_cast<std::ptrdiff_t>(round) * n + token]);
    });
    m_sortedPlot->clearItems();
    if (m_slots / m_chunkLen * m_rounds <= kMaxBoundaryLines)
        for (int boundary = m_chunkLen; boundary < m_slots; boundary += m_chunkLen) {
            auto* line = new QCPItemStraightLine(m_sortedPlot);
            line->setPen(QPen(palette().color(QPalette::Text), 1.5));
            line->point1->setCoords(boundary - 0.5, 0);
            line->point2->setCoords(boundary - 0.5, 1);
        }
    titleOf(m_bucketPlot)->setText(tr("head %1: bucket of each token in each hashing round (%2 buckets; colour = bucket)")
                                       .arg(head)
                                       .arg(m_buckets));
    titleOf(m_sortedPlot)->setText(tr("sorted by (bucket, position) and cut into chunks of %1; blank = chunk padding")
                                       .arg(m_chunkLen));
    replotWhenShown(m_bucketPlot);
    replotWhenShown(m_sortedPlot);

    const int chunksPerRound = m_slots / m_chunkLen;
    QStringList lines;
    lines << tr("Which chunk sees which: chunk c attends chunks c − %1 … c + %2 modulo %3 (all rounds in one list, "
                "so a round's first chunk looks into the previous round's last chunk).")
                 .arg(m_before)
                 .arg(m_after)
                 .arg(m_chunkCount);
    for (int c = 0; c < m_chunkCount && c < kMaxChunkLines; ++c) {
        QStringList seen;
        for (int other : chunksSeenBy(c))
            seen << tr("%1 (round %2, slots %3–%4)")
                        .arg(other)
                        .arg(other / chunksPerRound)
                        .arg(other % chunksPerRound * m_chunkLen)
                        .arg(other % chunksPerRound * m_chunkLen + m_chunkLen - 1);
        lines << tr("chunk %1 (round %2) sees %3").arg(c).arg(c / chunksPerRound).arg(seen.join(QStringLiteral(", ")));
    }
    m_chunks->setPlainText(lines.join(QLatin1Char('\n')));

    const engine::PlainTensor* rotations = lsh->rotations;
    QStringList shape;
    if (rotations)
        for (auto s : rotations->shape) shape << QString::number(s);
    m_info->setText(tr("reformer, head %1: %2 rounds × %3 tokens, %4 buckets, chunk_len %5, %6 chunks; random rotations "
                       "R [%7] (bucket = argmax([xR; −xR]))")
                        .arg(head)
                        .arg(m_rounds)
                        .arg(n)
                        .arg(m_buckets)
                        .arg(m_chunkLen)
                        .arg(m_chunkCount)
                        .arg(shape.isEmpty() ? tr("not stored") : shape.join(QStringLiteral(" × "))) +
                    fewChunksNote(n, chunksPerRound));
}

QString LshView::fewChunksNote(int n, int chunksPerRound) {
    // With the paper's chunk_len (64) a short text fills one or two chunks a round, and each chunk
    // with its neighbour sees nearly every token: hashing then changes little. Say so, and what
    // shows the mechanism on such a text.
    m_suggest->hide();
    if (chunksPerRound > 2) return {};
    const int suggested = std::max(2, n / 10);
    m_suggestion = QStringLiteral("chunk_len=%1").arg(suggested);
    m_suggest->setText(tr("Try chunk_len = %1").arg(suggested));
    m_suggest->setToolTip(tr("Runs reformer again with chunk_len = %1 (the other parameters as they are)").arg(suggested));
    m_suggest->show();
    const int buckets = std::max(2, ((n + suggested - 1) / suggested + 1) / 2 * 2);
    return tr(" — Only %1 chunk(s) a round: with chunk_len %2, %3 tokens fill %1 chunk(s) and n_buckets = 0 picks "
              "%4 buckets, so each chunk and the one before it see nearly every token and LSH changes little. "
              "Set chunk_len = %5 (about %6 buckets) to see hashing sort similar tokens together on a short text.")
        .arg(chunksPerRound)
        .arg(m_chunkLen)
        .arg(n)
        .arg(m_buckets)
        .arg(suggested)
        .arg(buckets);
}

double LshView::bucketCell(int round, int position) const { return cellOf(m_bucketPlot, round, position); }

QColor LshView::bucketColor(int round, int position) const {
    const double v = bucketCell(round, position);
    QCPColorMap* map = mapOf(m_bucketPlot);
    QCPColorGradient gradient = map->gradient();
    return QColor::fromRgba(gradient.color(v, map->dataRange()));
}

long long LshView::sortedToken(int round, int slot) const {
    if (round < 0 || round >= m_rounds || slot < 0 || slot >= m_slots) return -1;
    return m_sorted[static_cast<std::size_t>(round) * m_slots + slot];
}

double LshView::sortedCell(int round, int slot) const { return cellOf(m_sortedPlot, round, slot); }

QVector<int> LshView::chunksSeenBy(int chunk) const {
    QVector<int> out;
    if (m_chunkCount <= 0 || chunk < 0 || chunk >= m_chunkCount) return out;
    for (int o = -m_before; o <= m_after; ++o) out << ((chunk + o) % m_chunkCount + m_chunkCount) % m_chunkCount;
    return out;
}

QString LshView::chunkText() const { return m_chunks->toPlainText(); }
QString LshView::message() const { return m_shownHead < 0 ? m_info->text() : QString(); }

}  // namespace attnscope::views
