#pragma once
// Log-log plots of time and peak memory against sequence length n, one line per variant, with the
// fitted log-log slope in the legend ("full (slope 2.01)"): the Long Range Arena way of comparing
// efficient attention, measured on the user's machine.

#include <QMap>
#include <QString>
#include <QVector>
#include <QWidget>

#include <cstdint>
#include <vector>

class QCustomPlot;
class QLabel;
class QResizeEvent;

namespace attnscope::views {

/// One measured (variant, n) of a scaling run. Plain values, so they cross threads.
struct ScalingPoint {
    QString variantId;
    QString label;             ///< legend text, e.g. the variant's display name
    std::int64_t n = 0;
    double seconds = 0;        ///< attention wall time (the engine's counters), best of the repeats
    std::uint64_t peakBytes = 0;
    double flops = 0;
    bool skipped = false;      ///< not run: over the memory budget, or failed
    QString message;           ///< why it was skipped
};

/// Least-squares slope of ln(y) against ln(x) over the points with x > 0 and y > 0; NaN with
/// fewer than two such points. A slope of 2 means y grows as n².
double logLogSlope(const std::vector<double>& x, const std::vector<double>& y);

/// Tick values and labels for a log axis over [lo, hi]: the finest of 1–9, 1-2-5, 1-3, powers of
/// ten, every 2nd, 3rd or 5th power that gives at most `maxTicks` (at least two) labels.
QMap<double, QString> logTickLabels(double lo, double hi, int maxTicks);

class ScalingPlot : public QWidget {
    Q_OBJECT
public:
    explicit ScalingPlot(QWidget* parent = nullptr);
    ~ScalingPlot() override;

    /// The time plot's axis label (default "attention time (s)": the engine's counters).
    void setTimeLabel(const QString& label);
    void clear();
    /// Adds a measured point (skipped points are listed in skippedText(), not drawn).
    void addPoint(const ScalingPoint& point);

    QStringList variantIds() const;
    /// Measured (not skipped) points of a variant, in the order they arrived.
    QVector<ScalingPoint> points(const QString& variantId) const;
    double timeSlope(const QString& variantId) const;
    double memorySlope(const QString& variantId) const;
    /// Legend text of the time plot's line for the variant.
    QString timeLegend(const QString& variantId) const;
    /// One line per skipped point: "full, n = 8192: <why>".
    QStringList skippedText() const;
    /// Under the plots, as their legend: how to read a slope, then per measured variant (in its
    /// line's colour) its two slopes and, for one that computes every score in linear memory
    /// (`full`), why its memory slope is about 1, not 2. One line each.
    QString slopeNote() const;

    QCustomPlot* timePlot() const { return m_timePlot; }
    QCustomPlot* memoryPlot() const { return m_memoryPlot; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateValueTicks();
    struct Series {
        QString id;
        QString label;
        QVector<ScalingPoint> points;
    };
    void redraw();
    const Series* find(const QString& id) const;

    QCustomPlot* m_timePlot = nullptr;
    QCustomPlot* m_memoryPlot = nullptr;
    QLabel* m_note = nullptr;
    QVector<Series> m_series;
    QStringList m_skipped;
};

}  // namespace attnscope::views
