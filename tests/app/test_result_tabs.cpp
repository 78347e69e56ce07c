// The rule that delivers results to the window's tabs (gui/window/result_tabs.h), with recording tabs
// instead of views: who takes which result, when, and what parking and flushing do.
#include "support/qt_test_support.h"

#include "gui/window/result_tabs.h"

#include <QTest>

#include <memory>
#include <string>
#include <vector>

using attnscope::app::ResultTabs;
namespace engine = attnscope::engine;

namespace {

/// A tab that writes what it is asked into a shared log: "take N" (N = the result's n, 0 = none),
/// "park", "finish".
struct Log {
    std::vector<std::string> lines;
};

/// A view that logs what it is asked; it lets go when parked only if `parks`, logs its background
/// work only if `finishes`.
class RecordingTab final : public attnscope::views::ResultView {
public:
    RecordingTab(std::shared_ptr<Log> log, std::string name, bool parks, bool finishes)
        : m_log(std::move(log)), m_name(std::move(name)), m_parks(parks), m_finishes(finishes) {}
    void setResult(Run run) override { m_log->lines.push_back(m_name + " take " + std::to_string(run ? run->n : 0)); }
    void setInspectionState(attnscope::views::InspectionState*) override {}
    bool park() override {
        if (m_parks) m_log->lines.push_back(m_name + " park");
        return m_parks;
    }
    void finishBackgroundWork() override {
        if (m_finishes) m_log->lines.push_back(m_name + " finish");
    }

private:
    std::shared_ptr<Log> m_log;
    std::string m_name;
    bool m_parks, m_finishes;
};

/// The tabs of one test, kept alive as long as the table that points at them.
struct Recorders {
    std::vector<std::unique_ptr<RecordingTab>> tabs;
    RecordingTab* make(const std::shared_ptr<Log>& log, const std::string& name, bool parks, bool finishes) {
        tabs.push_back(std::make_unique<RecordingTab>(log, name, parks, finishes));
        return tabs.back().get();
    }
};

ResultTabs::Run result(std::int64_t n) {
    auto run = std::make_shared<engine::RunResult>();
    run->n = n;
    return run;
}

}  // namespace

class TestResultTabs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void theShownTabTakesAtOnceTheOthersWhenShown() {
        auto log = std::make_shared<Log>();
        Recorders recorders;
        ResultTabs tabs;
        tabs.add(0, recorders.make(log, "heatmap", false, true));
        tabs.add(1, recorders.make(log, "mask", true, true));
        QVERIFY(tabs.pending(0) && tabs.pending(1));
        tabs.deliver(0);  // no result yet: nothing
        QVERIFY(log->lines.empty());
        tabs.setResult(result(5));
        tabs.deliver(0);
        QCOMPARE(log->lines, (std::vector<std::string>{"heatmap take 5"}));
        QVERIFY(!tabs.pending(0));
        QVERIFY(tabs.pending(1));
        tabs.deliver(0);  // once
        QCOMPARE(log->lines.size(), std::size_t{1});
        tabs.deliver(1);
        QCOMPARE(log->lines.back(), std::string("mask take 5"));
        QVERIFY(!tabs.pending(7));  // a view without a tab never waits once a result exists
    }

    void aNewResultFirstTakesTheOldOneAway() {
        auto log = std::make_shared<Log>();
        Recorders recorders;
        ResultTabs tabs;
        tabs.add(0, recorders.make(log, "heatmap", false, false));
        tabs.add(1, recorders.make(log, "mask", true, false));
        tabs.setResult(result(5));
        tabs.deliver(0);
        log->lines.clear();
        tabs.setResult(result(9));
        // Only the tab that held the old result lets go of it; the mask never took it.
        QCOMPARE(log->lines, (std::vector<std::string>{"heatmap take 0"}));
        QVERIFY(tabs.pending(0) && tabs.pending(1));
        QCOMPARE(tabs.result()->n, std::int64_t{9});
    }

    void parkingLetsGoUntilShownAgain() {
        auto log = std::make_shared<Log>();
        Recorders recorders;
        ResultTabs tabs;
        tabs.add(0, recorders.make(log, "heatmap", false, false));
        tabs.add(1, recorders.make(log, "mask", true, false));
        tabs.setResult(result(4));
        tabs.deliver(0);
        tabs.deliver(1);
        log->lines.clear();
        tabs.park(0);  // the heatmap keeps its result (no park)
        QVERIFY(!tabs.pending(0));
        tabs.park(1);
        QCOMPARE(log->lines, (std::vector<std::string>{"mask park"}));
        QVERIFY(tabs.pending(1));
        tabs.park(1);  // parked already
        QCOMPARE(log->lines.size(), std::size_t{1});
        tabs.deliver(1);
        QCOMPARE(log->lines.back(), std::string("mask take 4"));
    }

    void flushGivesEveryTabTheResultThenFinishes() {
        auto log = std::make_shared<Log>();
        Recorders recorders;
        ResultTabs tabs;
        tabs.add(0, recorders.make(log, "heatmap", false, true));
        tabs.add(1, recorders.make(log, "mask", true, true));
        tabs.add(2, recorders.make(log, "cost", false, false));
        tabs.setResult(result(3));
        tabs.deliver(0);
        log->lines.clear();
        tabs.flush();
        QCOMPARE(log->lines, (std::vector<std::string>{"mask take 3", "cost take 3", "heatmap finish", "mask finish"}));
        for (int view = 0; view < 3; ++view) QVERIFY(!tabs.pending(view));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestResultTabs)
#include "test_result_tabs.moc"
