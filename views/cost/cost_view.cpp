#include "views/cost/cost_view.h"

#include "views/widgets/measure_controls.h"

#include "views/cost/eval_speed_panel.h"
#include "views/cost/switch_ffn_panel.h"

#include "views/diagnostics/categorical_palette.h"
#include "views/diagnostics/plot_style.h"
#include "views/widgets/qcp.h"

#include <QGroupBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace attnscope::views {

namespace {

constexpr int kMaxSize = 1 << 20;

QString formatSeconds(double seconds) {
    if (seconds < 1e-3) return QObject::tr("%1 µs").arg(seconds * 1e6, 0, 'f', 1);
    if (seconds < 1.0) return QObject::tr("%1 ms").arg(seconds * 1e3, 0, 'f', 2);
    return QObject::tr("%1 s").arg(seconds, 0, 'f', 3);
}

QTableWidgetItem* item(const QString& text, const QVariant& value = {}) {
    auto* it = new QTableWidgetItem(text);
    it->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    // The raw number, so tests and "copy values" read data rather than formatted text.
    if (value.isValid()) it->setData(Qt::UserRole, value);
    return it;
}

}  // namespace

MeasureSizes CostView::scalingSizes() {
    QStringList defaults;
    for (int n : defaultSizes()) defaults << QString::number(n);
    MeasureSizes sizes;
    sizes.label = tr("&Sizes n");
    sizes.defaults = defaults.join(QStringLiteral(", "));
    sizes.least = 2;
    sizes.most = kMaxSize;
    sizes.one = tr("a size");
    sizes.many = tr("sizes");
    sizes.tip = tr("Sequence lengths to measure, comma-separated; sizes over the memory budget are skipped");
    sizes.measureTip = tr("Runs every chosen variant at every size in the background (same heads, head dim and seed)");
    sizes.objectName = QStringLiteral("scalingSizes");
    return sizes;
}

QVector<int> CostView::parseSizes(const QString& text, QString* error) { return MeasureControls::parseSizes(text, scalingSizes(), error); }

CostView::CostView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);

    // ---- this run
    auto* runBox = new QGroupBox(tr("This run"), splitter);
    auto* runLayout = new QHBoxLayout(runBox);
    auto* tableSide = new QVBoxLayout;
    m_summary = new QLabel(runBox);
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    tableSide->addWidget(m_summary);
    m_table = new QTableWidget(0, ColumnCount, runBox);
    m_table->setHorizontalHeaderLabels(
        {tr("variant"), tr("stage"), tr("time"), tr("peak\nmemory"), tr("FLOPs"), tr("entries\ncomputed")});
    // (two-line headers: one line each made the table wider than its side of a laptop screen)
    m_table->horizontalHeaderItem(PeakColumn)->setToolTip(tr("Peak bytes of engine-owned buffers during the variant's run"));
    m_table->horizontalHeaderItem(FlopsColumn)->setToolTip(tr("Multiply-adds count as 2 FLOPs"));
    m_table->horizontalHeaderItem(EntriesColumn)->setToolTip(tr("(query, key) scores evaluated"));
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    tableSide->addWidget(m_table, 1);
    runLayout->addLayout(tableSide, 3);
    m_bars = new QCustomPlot(runBox);
    styleDiagnosticPlot(m_bars);
    // Horizontal bars: the variants' names on the left read whole, however many there are
    // (under vertical bars they ran together); the stages' legend below, off the bars.
    m_bars->xAxis->setLabel(tr("time (ms)"));
    m_bars->yAxis->setRangeReversed(true);  // the first variant on top, as in the table
    placeLegendBelow(m_bars, 3);
    m_bars->setMinimumSize(260, 160);
    runLayout->addWidget(m_bars, 2);
    splitter->addWidget(runBox);

    // ---- scaling
    // ---- measurements on request: scaling with n, Transformer-XL's evaluation speed
    m_measureTabs = new QTabWidget(splitter);
    auto* scalingBox = new QWidget(m_measureTabs);
    auto* scalingLayout = new QHBoxLayout(scalingBox);
    m_controls = new MeasureControls(scalingSizes(), scalingBox);
    m_variantList = new QListWidget(m_controls);
    m_controls->form()->insertRow(0, tr("Variants"), m_variantList);
    scalingLayout->addWidget(m_controls);
    m_scaling = new ScalingPlot(scalingBox);
    scalingLayout->addWidget(m_scaling, 1);
    m_measureTabs->addTab(scalingBox, tr("Scaling with sequence length (log-log)"));
    m_evalSpeed = new EvalSpeedPanel(m_measureTabs);
    m_measureTabs->addTab(m_evalSpeed, tr("Transformer-XL evaluation speed"));
    m_switchFfn = new SwitchFfnPanel(m_measureTabs);
    m_measureTabs->addTab(m_switchFfn, tr("Switch FFN vs dense"));
    m_measureTabs->setTabToolTip(1, tr("Per token: cached memory against recomputing the window (Dai et al. 2019, Table 9)"));
    splitter->addWidget(m_measureTabs);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({200, 300});  // proportions: the scaling plots and their note need the height
    // The tab scrolls when the window is short (a 1366 × 768 laptop) instead of setting the
    // window's minimum height: the run's table and the measurements both keep a readable size.
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(splitter);
    layout->addWidget(scroll);

    connect(m_controls, &MeasureControls::measureWanted, this, &CostView::requestScaling);
    connect(m_controls, &MeasureControls::cancelRequested, this, &CostView::scalingCancelRequested);
    m_controls->setStatus(tr("Choose variants and sizes, then Measure."));
    rebuildTable();
    rebuildBars();
}

CostView::~CostView() = default;

void CostView::setResult(Run result) {
    m_result = std::move(result);
    rebuildTable();
    rebuildBars();
}

void CostView::setVariants(const QVector<QPair<QString, QString>>& idAndName) {
    const QStringList checked = checkedVariants();
    m_variantList->clear();
    m_names.clear();
    for (const auto& [id, name] : idAndName) {
        m_names.insert(id, name);
        auto* it = new QListWidgetItem(name, m_variantList);
        it->setData(Qt::UserRole, id);
        it->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        it->setCheckState(checked.contains(id) ? Qt::Checked : Qt::Unchecked);
    }
    rebuildTable();
    rebuildBars();
}

void CostView::setCheckedVariants(const QStringList& ids) {
    for (int i = 0; i < m_variantList->count(); ++i) {
        QListWidgetItem* it = m_variantList->item(i);
        it->setCheckState(ids.contains(it->data(Qt::UserRole).toString()) ? Qt::Checked : Qt::Unchecked);
    }
}

QStringList CostView::checkedVariants() const {
    QStringList ids;
    for (int i = 0; i < m_variantList->count(); ++i)
        if (m_variantList->item(i)->checkState() == Qt::Checked) ids << m_variantList->item(i)->data(Qt::UserRole).toString();
    return ids;
}

void CostView::rebuildTable() {
    m_table->setRowCount(0);
    if (!m_result || m_result->results.empty()) {
        m_summary->setText(tr("No result yet: run a variant to see its cost."));
        return;
    }
    const QLocale locale;
    for (const engine::AttentionResult& r : m_result->results) {
        const QString id = QString::fromStdString(r.variantId);
        const QString name = m_names.value(id, id);
        for (const engine::StageTime& stage : r.counters.stages) {
            const int row = m_table->rowCount();
            m_table->insertRow(row);
            m_table->setItem(row, VariantColumn, item(name, id));
            m_table->setItem(row, StageColumn, item(QString::fromStdString(stage.stage)));
            m_table->setItem(row, TimeColumn, item(formatSeconds(stage.seconds), stage.seconds));
            for (int c : {PeakColumn, FlopsColumn, EntriesColumn}) m_table->setItem(row, c, item(QString()));
        }
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        m_table->setItem(row, VariantColumn, item(name, id));
        m_table->setItem(row, StageColumn, item(tr("total")));
        m_table->setItem(row, TimeColumn, item(formatSeconds(r.counters.seconds), r.counters.seconds));
        m_table->setItem(row, PeakColumn,
                         item(locale.formattedDataSize(static_cast<qint64>(r.counters.peakBytes), 1, QLocale::DataSizeIecFormat),
                              QVariant::fromValue<qulonglong>(r.counters.peakBytes)));
        m_table->setItem(row, FlopsColumn, item(QString::number(r.counters.flops, 'g', 4), r.counters.flops));
        m_table->setItem(row, EntriesColumn,
                         item(locale.toString(static_cast<qlonglong>(r.counters.entriesComputed)),
                              QVariant::fromValue<qlonglong>(r.counters.entriesComputed)));
        QFont bold = m_table->font();
        bold.setBold(true);
        for (int c = 0; c < ColumnCount; ++c) m_table->item(row, c)->setFont(bold);
    }
    m_summary->setText(tr("n = %1 tokens, %2 heads × head dim %3. Time is the attention computation only; peak "
                          "memory counts the engine's buffers.")
                           .arg(m_result->n)
                           .arg(m_result->heads)
                           .arg(m_result->headDim));
}

namespace {

// A variant's name as a bar label of lines of at most `width` characters, broken at spaces: a long
// name ("Transformer-XL (segment memory, relative positions)") would otherwise take the plot's width.
QString barLabel(const QString& name, int width = 22) {
    QStringList lines;
    QString line;
    for (const QString& word : name.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        if (!line.isEmpty() && line.size() + 1 + word.size() > width) {
            lines << line;
            line.clear();
        }
        line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
    }
    if (!line.isEmpty()) lines << line;
    return lines.join(QLatin1Char('\n'));
}

}  // namespace

void CostView::rebuildBars() {
    m_bars->clearPlottables();
    if (!m_result || m_result->results.empty()) {
        replotWhenShown(m_bars);
        return;
    }
    // One stacked bar per variant, one layer per stage name (stages in first-seen order).
    QStringList stages;
    for (const auto& r : m_result->results)
        for (const auto& s : r.counters.stages)
            if (!stages.contains(QString::fromStdString(s.stage))) stages << QString::fromStdString(s.stage);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int i = 0; i < static_cast<int>(m_result->results.size()); ++i) {
        const QString id = QString::fromStdString(m_result->results[static_cast<std::size_t>(i)].variantId);
        ticker->addTick(i, barLabel(m_names.value(id, id)));
    }
    m_bars->yAxis->setTicker(ticker);
    m_bars->yAxis->setRange(-0.6, static_cast<double>(m_result->results.size()) - 0.4);
    QCPBars* below = nullptr;
    double top = 0;
    for (int s = 0; s < stages.size(); ++s) {
        auto* bars = new QCPBars(m_bars->yAxis, m_bars->xAxis);  // keys: the variants, on the left
        bars->setName(stages[s]);
        const QColor color = CategoricalPalette::standard().color(s);
        bars->setPen(QPen(color.darker(130)));
        bars->setBrush(color);
        bars->setWidth(0.6);
        if (below) bars->moveAbove(below);
        for (int i = 0; i < static_cast<int>(m_result->results.size()); ++i) {
            double seconds = 0;
            for (const auto& st : m_result->results[static_cast<std::size_t>(i)].counters.stages)
                if (QString::fromStdString(st.stage) == stages[s]) seconds += st.seconds;
            bars->addData(i, seconds * 1e3);
        }
        below = bars;
    }
    for (const auto& r : m_result->results) {
        double sum = 0;
        for (const auto& st : r.counters.stages) sum += st.seconds;
        top = std::max(top, sum * 1e3);
    }
    m_bars->xAxis->setRange(0, top > 0 ? top * 1.15 : 1.0);
    m_bars->legend->setVisible(!stages.isEmpty());
    replotWhenShown(m_bars);
}

QHash<QString, double> CostView::barSeconds(int index) const {
    QHash<QString, double> out;
    for (int p = 0; p < m_bars->plottableCount(); ++p) {
        auto* bars = qobject_cast<QCPBars*>(m_bars->plottable(p));
        if (!bars) continue;
        for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
            if (qRound(it->key) == index) out.insert(bars->name(), it->value / 1e3);
    }
    return out;
}

QString CostView::scalingStatus() const { return m_controls->status(); }
QLineEdit* CostView::sizesEdit() const { return m_controls->sizesEdit(); }
QPushButton* CostView::scalingButton() const { return m_controls->measureButton(); }
QPushButton* CostView::cancelButton() const { return m_controls->cancelButton(); }
QProgressBar* CostView::scalingProgress() const { return m_controls->progressBar(); }
bool CostView::scalingRunning() const { return m_controls->isRunning(); }

void CostView::requestScaling() {
    if (scalingRunning()) return;
    const QVector<int> sizes = m_controls->sizes();  // (a typing error is shown under the field)
    if (sizes.isEmpty()) return;
    const QStringList ids = checkedVariants();
    if (ids.isEmpty()) {
        m_controls->setStatus(tr("Tick at least one variant to measure."));
        return;
    }
    Q_EMIT scalingRequested(ids, sizes);
}

void CostView::setScalingStarted(int total) {
    m_scaling->clear();
    m_controls->setStarted(total);
    m_controls->setStatus(tr("Measuring %1 (variant, n) pairs…").arg(total));
}

void CostView::addScalingPoint(const ScalingPoint& point) { m_scaling->addPoint(point); }

void CostView::setScalingProgress(int done, int total, const QString& text) { m_controls->setProgress(done, total, text); }

void CostView::setScalingFinished(const QString& message) {
    m_controls->setFinished(message);
    const QStringList skipped = m_scaling->skippedText();
    if (skipped.isEmpty()) return;
    // Rich text on purpose (wrapping), with the engine's messages escaped.
    m_controls->setStatus(tr("%1 Skipped: %2").arg(message, skipped.join(QStringLiteral("; "))),
                          QStringLiteral("<p style='white-space:pre-wrap'>%1</p>").arg(skipped.join(QLatin1Char('\n')).toHtmlEscaped()));
}

}  // namespace attnscope::views
