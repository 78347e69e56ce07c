#pragma once
// The compare view's error summary against exact softmax (`full`): a table with one row per pane
// (mean and max per-row L1, KL(full ‖ variant) where defined, the share of full's mass the
// variant's pattern keeps) and the per-row L1 distance of every pane as a small plot.

#include "views/data/error_summary.h"

#include <QColor>
#include <QString>
#include <QVector>
#include <QWidget>

class QCustomPlot;
class QLabel;
class QTableWidget;

namespace attnscope::views {

class CompareErrorPanel : public QWidget {
    Q_OBJECT
public:
    enum Column { VariantColumn = 0, MeanL1Column, MaxL1Column, KlColumn, KeptMassColumn, ColumnCount };

    struct Entry {
        QString name;  ///< "B: Longformer"
        QColor color;  ///< the pane's line colour in the per-row plot
        ErrorSummary summary;
    };

    explicit CompareErrorPanel(QWidget* parent = nullptr);
    ~CompareErrorPanel() override;

    /// One table row and one plot line per entry; `note` explains the reference (or its absence).
    void setEntries(const QVector<Entry>& entries, const QString& note);
    void clear(const QString& note);

    QTableWidget* table() const { return m_table; }
    /// As a figure: the table as wide as all its columns, no scroll bar (a figure cannot scroll).
    /// Returns the panel's width then.
    int setFigureMode(bool on);
    QCustomPlot* rowPlot() const { return m_rowPlot; }
    QString note() const;
    /// The per-row L1 values plotted for entry `index` (empty when it was not comparable).
    QVector<double> plottedRowL1(int index) const;

private:
    QLabel* m_note = nullptr;
    QTableWidget* m_table = nullptr;
    QCustomPlot* m_rowPlot = nullptr;
};

}  // namespace attnscope::views
