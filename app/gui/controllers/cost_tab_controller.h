#pragma once
// The Cost tab's measurements on the engine thread: the scaling sweep of the checked variants
// (time and memory against n, with the settings column's Q/K/V settings and each variant's form
// values), Transformer-XL's evaluation speed and the Switch layer against a dense FFN; their
// progress, points and end go to the tab.

#include <attnscope/variant_info.h>

#include <QObject>
#include <QString>

#include <vector>

namespace attnscope::views {
class CostView;
}

namespace attnscope::app {

class EngineRunner;
class EvalSpeedJob;
class RunSettingsPanel;
class ScalingJob;
class SwitchFfnJob;

class CostTabController : public QObject {
    Q_OBJECT
public:
    CostTabController(EngineRunner* runner, views::CostView* view, RunSettingsPanel* inputs, QObject* parent);

    ScalingJob* scalingJob() const { return m_scaling; }
    EvalSpeedJob* evalSpeedJob() const { return m_evalSpeed; }
    SwitchFfnJob* switchFfnJob() const { return m_switchFfn; }
    /// True while a measurement runs (Esc cancels it).
    bool isRunning() const;
    void cancel();
    /// Lists the variants to sweep; the first time, exact softmax, the chosen variant and the
    /// first compared one are checked (a useful first sweep).
    void setVariants(const std::vector<engine::VariantInfo>& variants);

Q_SIGNALS:
    /// A measurement started or ended.
    void busyChanged();

private:
    void startScaling(const QStringList& ids, const QVector<int>& sizes);
    void connectEvalSpeed();
    void connectSwitchFfn();

    views::CostView* m_view = nullptr;
    RunSettingsPanel* m_inputs = nullptr;
    ScalingJob* m_scaling = nullptr;
    EvalSpeedJob* m_evalSpeed = nullptr;
    SwitchFfnJob* m_switchFfn = nullptr;
};

}  // namespace attnscope::app
