#pragma once
// The cost view: the current run's counters per variant and stage (time, peak memory, FLOPs,
// entries computed) as a table and a stacked bar chart of stage times, and a scaling plot — time
// and memory against n for chosen variants — that the app computes on request in the background
// (the view only emits the intent and shows what comes back).

#include "views/widgets/result_view.h"
#include "views/cost/scaling_plot.h"

#include <attnscope/types.h>

#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include <memory>
#include <vector>

class QCustomPlot;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableWidget;

namespace attnscope::views {

class EvalSpeedPanel;
class MeasureControls;
class SwitchFfnPanel;
struct MeasureSizes;

class CostView : public QWidget, public ResultView {
    Q_OBJECT
public:
    enum Column { VariantColumn = 0, StageColumn, TimeColumn, PeakColumn, FlopsColumn, EntriesColumn, ColumnCount };
    /// The default sizes of a scaling run.
    static QVector<int> defaultSizes() { return {256, 512, 1024, 2048, 4096, 8192}; }
    /// The scaling sweep's sizes: 2 ≤ n ≤ 1 << 20, the defaults above.
    static MeasureSizes scalingSizes();
    /// Parses "256, 512 1024" (commas or spaces) against scalingSizes(); empty with *error set on
    /// bad input. Sizes are sorted and deduplicated.
    static QVector<int> parseSizes(const QString& text, QString* error);

    explicit CostView(QWidget* parent = nullptr);
    ~CostView() override;

    void setResult(Run result) override;
    /// (the counters are the whole run's: the page follows no selection)
    void setInspectionState(InspectionState*) override {}
    /// Variants offered for the scaling plot (id → display name, in order).
    void setVariants(const QVector<QPair<QString, QString>>& idAndName);
    /// Ticks these ids in the scaling list (the run's variants, by default).
    void setCheckedVariants(const QStringList& ids);
    QStringList checkedVariants() const;

    // The table: one row per (variant, stage) and a "total" row per variant holding the run's
    // peak memory, FLOPs and entries computed (the engine counts those per variant, not per stage).
    QTableWidget* table() const { return m_table; }
    QCustomPlot* barChart() const { return m_bars; }
    /// Stage seconds drawn for the variant at bar position `index` (result order), by stage name.
    QHash<QString, double> barSeconds(int index) const;
    ScalingPlot* scalingPlot() const { return m_scaling; }
    /// The tabs below the run: "Scaling with sequence length", "Transformer-XL evaluation speed"
    /// and "Switch FFN vs dense".
    QTabWidget* measureTabs() const { return m_measureTabs; }
    EvalSpeedPanel* evalSpeedPanel() const { return m_evalSpeed; }
    SwitchFfnPanel* switchFfnPanel() const { return m_switchFfn; }
    // The scaling sweep's column (MeasureControls, as the other measurement pages).
    QLineEdit* sizesEdit() const;
    QPushButton* scalingButton() const;
    QPushButton* cancelButton() const;
    QProgressBar* scalingProgress() const;
    QString scalingStatus() const;
    bool scalingRunning() const;

public Q_SLOTS:
    /// Parses the sizes and emits scalingRequested (the Measure button does this).
    void requestScaling();
    // The app's answers while a scaling run goes on.
    void setScalingStarted(int total);
    void addScalingPoint(const attnscope::views::ScalingPoint& point);
    void setScalingProgress(int done, int total, const QString& text);
    /// The run ended (finished, cancelled or failed); `message` says how.
    void setScalingFinished(const QString& message);

Q_SIGNALS:
    /// Intent: measure every (variant, n) pair in the background.
    void scalingRequested(const QStringList& variantIds, const QVector<int>& sizes);
    /// Intent: stop the scaling run.
    void scalingCancelRequested();

private:
    void rebuildTable();
    void rebuildBars();
    QTableWidget* m_table = nullptr;
    QCustomPlot* m_bars = nullptr;
    QLabel* m_summary = nullptr;
    QListWidget* m_variantList = nullptr;
    MeasureControls* m_controls = nullptr;
    ScalingPlot* m_scaling = nullptr;
    QTabWidget* m_measureTabs = nullptr;
    EvalSpeedPanel* m_evalSpeed = nullptr;
    SwitchFfnPanel* m_switchFfn = nullptr;
    std::shared_ptr<const engine::RunResult> m_result;
    QHash<QString, QString> m_names;
};

}  // namespace attnscope::views
