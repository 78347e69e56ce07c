#include "views/compare/compare_error_panel.h"

#include "views/diagnostics/plot_style.h"
#include "views/widgets/qcp.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

namespace {

QString number(double value, int decimals = 4) {
    if (std::isnan(value)) return QStringLiteral("—");
    // A KL of -1e-9 (rounding in a sum that is 0 in exact arithmetic) reads "0.0000", not "-0.0000".
    const QString text = QString::number(value, 'f', decimals);
    return text == QLatin1Char('-') + QString::number(0.0, 'f', decimals) ? text.mid(1) : text;
}

QTableWidgetItem* cell(const QString& text, const QString& toolTip = {}) {
    auto* item = new QTableWidgetItem(text);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    item->setToolTip(toolTip);  // plain text: the texts below contain no markup
    return item;
}

}  // namespace

CompareErrorPanel::CompareErrorPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_note = new QLabel(this);
    m_note->setTextFormat(Qt::PlainText);  // variant names and engine messages are data
    m_note->setWordWrap(true);
    m_note->setContentsMargins(4, 2, 4, 2);
    layout->addWidget(m_note);

    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setHorizontalHeaderLabels(
        {tr("variant"), tr("mean L1"), tr("max L1 (row)"), tr("KL(full ‖ ·)"), tr("kept mass")});
    m_table->horizontalHeaderItem(MeanL1Column)
        ->setToolTip(tr("Σ_j |variant_ij − full_ij| per query row i, averaged over rows (0 = identical, 2 = disjoint)"));
    m_table->horizontalHeaderItem(KlColumn)
        ->setToolTip(tr("Σ_j full_ij ln(full_ij / variant_ij), averaged over the rows where the variant gives "
                        "positive weight to every key full attends"));
    m_table->horizontalHeaderItem(KeptMassColumn)
        ->setToolTip(tr("Share of full's softmax mass on the keys the variant's pattern allows, averaged over rows"));
    m_table->verticalHeader()->setVisible(false);
    // Every column as wide as its header and numbers (a stretched "max L1 (row)" was cut to
    // "max L1 (row" and its numbers wrapped); a narrow panel scrolls sideways instead.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_table->setProperty("attnscopeExportRender", true);  // FigurePainter::kRenderProperty: the table is part of figures
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // every row is in view (setEntries)
    layout->addWidget(m_table);

    m_rowPlot = new QCustomPlot(this);
    styleDiagnosticPlot(m_rowPlot);
    m_rowPlot->xAxis->setLabel(tr("query"));
    m_rowPlot->yAxis->setLabel(tr("row L1 vs full"));
    placeLegendBelow(m_rowPlot, 2);  // inside the axes it hid the curves
    m_rowPlot->setMinimumHeight(170);
    layout->addWidget(m_rowPlot, 1);
    clear(tr("No result yet."));
}

CompareErrorPanel::~CompareErrorPanel() = default;

QString CompareErrorPanel::note() const { return m_note->text(); }

void CompareErrorPanel::clear(const QString& note) { setEntries({}, note); }

void CompareErrorPanel::setEntries(const QVector<Entry>& entries, const QString& note) {
    m_note->setText(note);
    // Without entries the note says why: no empty table, no empty axes.
    m_table->setVisible(!entries.isEmpty());
    showEmptyPlot(m_rowPlot, entries.isEmpty());
    m_rowPlot->setVisible(!entries.isEmpty());
    m_table->setRowCount(static_cast<int>(entries.size()));
    m_rowPlot->clearGraphs();
    double yMax = 0;
    std::int64_t rows = 1;
    for (int r = 0; r < entries.size(); ++r) {
        const Entry& e = entries[r];
        const ErrorSummary& s = e.summary;
        m_table->setItem(r, VariantColumn, cell(e.name));
        m_table->item(r, VariantColumn)->setForeground(e.color);
        if (!s.ok) {
            m_table->setItem(r, MeanL1Column, cell(QString::fromStdString(s.message), QString::fromStdString(s.message)));
            for (int c = MaxL1Column; c < ColumnCount; ++c) m_table->setItem(r, c, cell(QStringLiteral("—")));
            continue;
        }
        m_table->setItem(r, MeanL1Column, cell(number(s.meanL1)));
        m_table->setItem(r, MaxL1Column, cell(QStringLiteral("%1 (%2)").arg(number(s.maxL1)).arg(s.maxL1Row)));
        const QString klText = s.klDefinedRows == 0 ? tr("undefined")
                               : s.klDefinedRows < s.rows - s.emptyReferenceRows
                                   ? tr("%1 (%2 of %3 rows)").arg(number(s.meanKl)).arg(s.klDefinedRows).arg(s.rows - s.emptyReferenceRows)
                                   : number(s.meanKl);
        m_table->setItem(r, KlColumn, cell(klText, QString::fromStdString(s.klDescription())));
        m_table->setItem(r, KeptMassColumn, cell(number(s.meanKeptMass)));

        QCPGraph* graph = m_rowPlot->addGraph();
        graph->setName(e.name);
        graph->setPen(QPen(e.color, 1.5));
        QVector<double> x, y;
        for (std::size_t i = 0; i < s.rowL1.size(); ++i) {
            x << static_cast<double>(i);
            y << s.rowL1[i];
            yMax = std::max(yMax, s.rowL1[i]);
        }
        graph->setData(x, y, true);
        rows = std::max(rows, s.rows);
    }
    // Every row of the table in view (the curves below take the rest of the height).
    int tableHeight = m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth() + 2;
    for (int r = 0; r < m_table->rowCount(); ++r) tableHeight += m_table->rowHeight(r);
    if (m_table->horizontalScrollBar()->isVisible()) tableHeight += m_table->horizontalScrollBar()->sizeHint().height();
    m_table->setMinimumHeight(tableHeight);
    m_rowPlot->xAxis->setRange(-0.5, static_cast<double>(rows) - 0.5);
    m_rowPlot->yAxis->setRange(0, yMax > 0 ? yMax * 1.1 : 1.0);
    m_rowPlot->legend->setVisible(m_rowPlot->graphCount() > 0);
    replotWhenShown(m_rowPlot);
}

int CompareErrorPanel::setFigureMode(bool on) {
    m_table->setHorizontalScrollBarPolicy(on ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded);
    // Every column at its contents' width now (the header otherwise resizes them on a later
    // event, after the figure was painted), the last one not stretched.
    QHeaderView* header = m_table->horizontalHeader();
    header->setStretchLastSection(!on);
    int width = 2 * m_table->frameWidth();
    for (int c = 0; c < m_table->columnCount(); ++c) {
        // (public in QAbstractItemView, protected in QTableView)
        const int contents = std::max(header->sectionSizeHint(c), static_cast<const QAbstractItemView*>(m_table)->sizeHintForColumn(c));
        if (on) header->resizeSection(c, contents);
        width += contents;
    }
    m_table->setMinimumWidth(on ? width : 0);
    return width;
}

QVector<double> CompareErrorPanel::plottedRowL1(int index) const {
    // Graphs exist only for comparable entries, named after them.
    const QString name = index >= 0 && index < m_table->rowCount() && m_table->item(index, VariantColumn)
                             ? m_table->item(index, VariantColumn)->text()
                             : QString();
    QVector<double> out;
    for (int g = 0; g < m_rowPlot->graphCount(); ++g) {
        if (m_rowPlot->graph(g)->name() != name) continue;
        for (auto it = m_rowPlot->graph(g)->data()->constBegin(); it != m_rowPlot->graph(g)->data()->constEnd(); ++it)
            out << it->value;
    }
    return out;
}

}  // namespace attnscope::views
