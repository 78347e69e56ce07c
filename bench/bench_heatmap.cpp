// Heatmap interactivity (issue 5): repaint time per pan and zoom step and per head switch for a
// 4096- and a 16384-token head of synthetic dense weights (pooled on a worker thread, as in the
// main window: the longest event-loop stall and the time until the pooled head is painted), and
// the longest event-loop stall while the main window runs a long engine job and shows its result.
// Qt on the offscreen platform; prints Markdown tables.
// Numbers go to docs/PERFORMANCE.md ("The window").
//
//   bench_heatmap            the full run (needs ~2.5 GB for the 16384-token heads)
//   bench_heatmap --smoke    small sizes, a few seconds (ctest, label `slow`)
//   bench_heatmap --first-paint   `full` on 4,096 and 20,000 characters (8 heads × 64): run to first paint
//   bench_heatmap --open-result FILE...   File ▸ Open Result: the file read, then the first overview shown

#include "common/omp_wait_policy.h"
#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"

#include "views/compare/compare_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/heatmap/head_heatmap.h"

#include <attnscope/engine.h>
#include <attnscope/explicit_weights.h>
#include <attnscope/result_file.h>
#include "views/heatmap/heads_grid.h"
#include "views/mask/mask_view.h"
#include "views/links/token_links.h"
#include "views/data/inspection_state.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QEventLoop>
#include <QPixmap>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace engine = attnscope::engine;
using attnscope::views::HeadHeatmap;
using attnscope::views::InspectionState;

/// Dense weights [heads, n, n] with a band, a few global columns and a per-head stripe, so pooled
/// and zoomed cells differ; rows are not normalised (display cost does not depend on it).
std::shared_ptr<const engine::RunResult> makeRun(int heads, int n) {
    auto run = std::make_shared<engine::RunResult>();
    run->n = n;
    run->heads = heads;
    run->headDim = 32;
    for (int i = 0; i < n; ++i) run->input.tokens.push_back(engine::Token{"w" + std::to_string(i), i, i + 1, i});
    engine::AttentionResult r;
    r.variantId = "full";
    r.heads = heads;
    r.n = r.m = n;
    r.d = 32;
    std::vector<float> w(static_cast<std::size_t>(heads) * n * n);
    for (int h = 0; h < heads; ++h) {
        for (int i = 0; i < n; ++i) {
            float* row = w.data() + (static_cast<std::size_t>(h) * n + i) * n;
            for (int j = 0; j < n; ++j) {
                const int d = std::abs(i - j);
                row[j] = 1.0f / (1.0f + static_cast<float>(d)) + (j % 512 == h ? 0.5f : 0.0f);
            }
        }
    }
    r.weights = engine::makeDenseWeights(heads, n, n, std::move(w));
    run->results.push_back(std::move(r));
    return run;
}

struct Stats {
    std::vector<double> ms;
    double median() const {
        if (ms.empty()) return 0;
        std::vector<double> s = ms;
        std::sort(s.begin(), s.end());
        return s[s.size() / 2];
    }
    double max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }
};

/// Runs the queued replots and paints the widget, as a frame on screen would.
double paintMs(QWidget* widget, QElapsedTimer& clock) {
    QCoreApplication::processEvents();
    const QPixmap frame = widget->grab();
    (void)frame;
    return static_cast<double>(clock.nsecsElapsed()) / 1e6;
}

/// The longest gap between the ticks of a 1 ms timer: how long the event loop could not run.
class StallProbe {
public:
    StallProbe() {
        m_timer.setInterval(1);
        m_timer.setTimerType(Qt::PreciseTimer);
        QObject::connect(&m_timer, &QTimer::timeout, [this] { tick(); });
    }
    void start() {
        m_clock.start();
        m_last = 0;
        m_maxGapMs = 0;
        m_timer.start();
    }
    /// Milliseconds since start().
    double elapsedMs() const { return static_cast<double>(m_clock.nsecsElapsed()) / 1e6; }
    /// Stops and returns the longest gap, counting the one up to now.
    double stop() {
        tick();
        m_timer.stop();
        return m_maxGapMs;
    }

private:
    void tick() {
        const qint64 now = m_clock.nsecsElapsed();
        m_maxGapMs = std::max(m_maxGapMs, static_cast<double>(now - m_last) / 1e6);
        m_last = now;
    }
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = 0;
    double m_maxGapMs = 0;
};

/// Runs the event loop until `heatmap` shows the head it pools in the background (if any).
// A 1200 × 900 heatmap pooling long heads on the worker thread, as in the main window, shown.
void showAsInTheWindow(HeadHeatmap& heatmap, InspectionState& state) {
    heatmap.resize(1200, 900);
    heatmap.setInspectionState(&state);
    heatmap.setBackgroundPooling();
    heatmap.show();
    QCoreApplication::processEvents();
}

void waitForPooling(HeadHeatmap* heatmap) {
    if (!heatmap->isPooling()) return;
    QEventLoop loop;
    QObject::connect(heatmap, &HeadHeatmap::backgroundPoolingFinished, &loop, &QEventLoop::quit);
    loop.exec();
}

/// A change whose head may pool in the background: the longest event-loop stall, and the time until
/// the pooled head is painted.
struct Change {
    double stallMs = 0;
    double shownMs = 0;
};

Change measureChange(HeadHeatmap* heatmap, const std::function<void()>& change) {
    StallProbe probe;
    probe.start();
    change();
    QCoreApplication::processEvents();
    (void)heatmap->grab();  // the frame right after the change (the previous head, or nothing yet)
    waitForPooling(heatmap);
    QCoreApplication::processEvents();
    (void)heatmap->grab();
    Change out;
    out.shownMs = probe.elapsedMs();
    out.stallMs = probe.stop();
    return out;
}

struct HeatmapNumbers {
    int n = 0;
    Change firstShow, firstSwitch;
    Stats zoom, pan, cachedSwitch;
};

HeatmapNumbers measureHeatmap(int n, int steps) {
    HeatmapNumbers out;
    out.n = n;
    const auto run = makeRun(2, n);
    InspectionState state;
    HeadHeatmap heatmap;
    showAsInTheWindow(heatmap, state);

    QElapsedTimer clock;
    clock.start();
    out.firstShow = measureChange(&heatmap, [&] { heatmap.setResult(run); });  // pools head 0 once

    // Zoom in by 0.8 per step around a point off the diagonal, then pan by 10 % of the span.
    double lo = -0.5, hi = n - 0.5;
    const double centre = n * 0.37;
    for (int s = 0; s < steps; ++s) {
        const double span = (hi - lo) * 0.8;
        lo = centre - span / 2;
        hi = centre + span / 2;
        clock.restart();
        heatmap.setVisibleRange(lo, hi, lo + n * 0.05, hi + n * 0.05);
        out.zoom.ms.push_back(paintMs(&heatmap, clock));
    }
    for (int s = 0; s < steps; ++s) {
        const double shift = (hi - lo) * 0.1;
        lo += shift;
        hi += shift;
        clock.restart();
        heatmap.setVisibleRange(lo, hi, lo + n * 0.05, hi + n * 0.05);
        out.pan.ms.push_back(paintMs(&heatmap, clock));
    }
    heatmap.resetZoom();
    QCoreApplication::processEvents();

    // Head switches: the first visit of head 1 pools it; later ones come from the cache.
    out.firstSwitch = measureChange(&heatmap, [&] { state.setHead(1); });
    for (int s = 1; s < steps; ++s) {
        clock.restart();
        state.setHead((s + 1) % 2);
        out.cachedSwitch.ms.push_back(paintMs(&heatmap, clock));
    }
    return out;
}

/// A real result at a long length, as the window shows it: the time from handing the result to
/// the heatmap until its first head's overview is painted (with the longest event-loop stall and
/// the progress steps the title showed meanwhile), zoom and pan repaints, and hover texts checked
/// against the exact weights.
struct RealHeadNumbers {
    std::string label;
    double runS = 0;
    Change firstShow;
    int progressSteps = 0;
    Stats zoom, pan;
    double regionMs = 0;  ///< longest wait, after a zoom or pan step, for the full-resolution region
    int hoverChecked = 0, hoverExact = 0;
};

/// Waits until the zoomed region the heatmap builds in the background is shown; its milliseconds.
double waitForRegion(HeadHeatmap& heatmap) {
    if (!heatmap.isBuildingRegion()) return 0;
    QElapsedTimer clock;
    clock.start();
    QEventLoop loop;
    QObject::connect(&heatmap, &HeadHeatmap::regionShown, &loop, &QEventLoop::quit);
    QTimer::singleShot(20000, &loop, &QEventLoop::quit);
    loop.exec();
    QCoreApplication::processEvents();
    (void)heatmap.grab();
    return clock.nsecsElapsed() / 1e6;
}

/// The input of a real result: `tokens` words, or with `chars` that many characters of the same
/// text; the projection's heads and head size (the window's default 4 × 32 unless set).
struct RealInput {
    int tokens = 0;
    bool chars = false;
    std::int64_t heads = 0, headDim = 0;
};

RealHeadNumbers measureRealHead(const std::string& label, const std::string& variant, const engine::ParamValues& params,
                                const RealInput& input, int steps) {
    RealHeadNumbers out;
    out.label = label;
    std::string text;
    for (int i = 0; static_cast<int>(input.chars ? text.size() : static_cast<std::size_t>(i)) < input.tokens; ++i)
        text += "w" + std::to_string(i * 7919 % 100003) + ' ';
    if (input.chars) text.resize(static_cast<std::size_t>(input.tokens));
    auto created = engine::Engine::create(engine::EngineOptions{});
    if (!created) return out;
    engine::RunRequest request;
    request.source = engine::InputSpec{text, input.chars ? engine::TokenizerKind::Chars : engine::TokenizerKind::Words, std::nullopt};
    if (input.heads > 0) request.projection.heads = static_cast<int>(input.heads);
    if (input.headDim > 0) request.projection.headDim = static_cast<int>(input.headDim);
    request.variants.push_back(engine::VariantRequest{variant, params});
    QElapsedTimer runClock;
    runClock.start();
    auto run = (*created)->run(request);
    out.runS = runClock.nsecsElapsed() / 1e9;
    if (!run) {
        std::fprintf(stderr, "bench_heatmap: %s: %s\n", label.c_str(), run.error().message.c_str());
        return out;
    }
    const auto result = run.value();
    InspectionState state;
    HeadHeatmap heatmap;
    showAsInTheWindow(heatmap, state);
    int lastPercent = -1;
    QTimer watch;
    watch.setInterval(100);
    QObject::connect(&watch, &QTimer::timeout, [&] {
        if (heatmap.isPooling() && heatmap.poolingPercent() != lastPercent) {
            lastPercent = heatmap.poolingPercent();
            ++out.progressSteps;
        }
    });
    watch.start();
    out.firstShow = measureChange(&heatmap, [&] { heatmap.setResult(result); });
    watch.stop();

    const double n = result->n;
    double lo = -0.5, hi = n - 0.5;
    const double centre = n * 0.37;
    QElapsedTimer clock;
    for (int s = 0; s < steps; ++s) {
        const double span = (hi - lo) * 0.6;
        lo = centre - span / 2;
        hi = centre + span / 2;
        clock.restart();
        heatmap.setVisibleRange(lo, hi, lo, hi);
        out.zoom.ms.push_back(paintMs(&heatmap, clock));
        out.regionMs = std::max(out.regionMs, waitForRegion(heatmap));
    }
    for (int s = 0; s < steps; ++s) {
        const double shift = (hi - lo) * 0.1;
        lo += shift;
        hi += shift;
        clock.restart();
        heatmap.setVisibleRange(lo, hi, lo, hi);
        out.pan.ms.push_back(paintMs(&heatmap, clock));
        out.regionMs = std::max(out.regionMs, waitForRegion(heatmap));
    }
    // Hover: zoomed out again (pooled cells), the text must carry the exact weight of the cell.
    heatmap.resetZoom();
    QCoreApplication::processEvents();
    const auto& weights = *result->results[0].weights;
    for (int t = 0; t < 50; ++t) {
        const auto query = static_cast<std::int64_t>((t * 2654435761u) % static_cast<std::uint64_t>(result->n));
        const std::int64_t key = std::clamp<std::int64_t>(query + (t % 7) * 37 - 100, 0, result->n - 1);
        const engine::WeightTile cell = weights.tile(0, query, query + 1, key, key + 1, true);
        const QString text = heatmap.hoverText(static_cast<int>(query), static_cast<int>(key));
        const QString expected = cell.reasons[0] ? QStringLiteral("weight %1\n").arg(cell.weights[0], 0, 'g', 4)
                                                 : QStringLiteral("not in the pattern\n");
        ++out.hoverChecked;
        if (text.contains(expected)) ++out.hoverExact;
    }
    return out;
}

/// One run of the window in the background, timed by a 1 ms timer's ticks.
struct StallRun {
    double runMs = 0;       ///< request to result shown
    double pooledMs = 0;    ///< request to the heatmap showing the pooled head
    double maxGapMs = 0;    ///< longest tick gap while the engine worked
    double showGapMs = 0;   ///< the gap that contains showing the result
    double afterGapMs = 0;  ///< longest gap after it (the pooled head arriving, painting)
    int ticks = 0;
};

struct StallNumbers {
    int n = 0;
    StallRun first;   ///< the first result of a fresh window
    StallRun second;  ///< the same run again: the views replace a result of the same size
    /// Each view's setResult with the same result again (after a reset to none), in ms: what a
    /// tab's first visit costs.
    std::vector<std::pair<const char*, double>> perView;
    /// Head switches in the window after the Mask and Links tabs were visited: a new head (pooled
    /// in the background) and back to a cached one; the tab switches themselves.
    Change windowFirstSwitch, windowCachedSwitch;
    Change maskTab;
    double linksTabMs = 0, heatmapTabMs = 0;
};

StallRun timeRun(attnscope::app::MainWindow& window) {
    using attnscope::app::MainWindow;
    StallRun out;
    std::vector<qint64> ticks;
    QElapsedTimer clock;
    qint64 shownAt = -1;
    qint64 pooledAt = -1;
    QTimer tick;
    tick.setInterval(1);
    tick.setTimerType(Qt::PreciseTimer);
    QObject::connect(&tick, &QTimer::timeout, [&] { ticks.push_back(clock.nsecsElapsed()); });
    QEventLoop loop;
    const auto finish = [&] {
        pooledAt = clock.nsecsElapsed();
        // A few more ticks after the heatmap updated, so the last gap is closed.
        QTimer::singleShot(50, &loop, &QEventLoop::quit);
    };
    QObject::connect(&window, &MainWindow::resultShown, &loop, [&] {
        shownAt = clock.nsecsElapsed();
        if (!window.views()->heatmap()->isPooling()) finish();
    });
    QObject::connect(window.views()->heatmap(), &HeadHeatmap::backgroundPoolingFinished, &loop, [&] {
        if (shownAt >= 0 && pooledAt < 0) finish();
    });
    QObject::connect(&window, &MainWindow::runFailed, &loop, [&](quint64, const QString& message, int) {
        std::fprintf(stderr, "bench_heatmap: run failed: %s\n", qPrintable(message));
        loop.quit();
    });
    clock.start();
    ticks.push_back(0);
    tick.start();
    window.runNow();
    loop.exec();
    tick.stop();
    out.ticks = static_cast<int>(ticks.size());
    out.runMs = shownAt / 1e6;
    out.pooledMs = pooledAt / 1e6;
    for (std::size_t i = 1; i < ticks.size(); ++i) {
        const double gap = (ticks[i] - ticks[i - 1]) / 1e6;
        if (shownAt >= ticks[i - 1] && shownAt <= ticks[i])
            out.showGapMs = std::max(out.showGapMs, gap);
        else if (ticks[i - 1] > shownAt) {
            out.afterGapMs = std::max(out.afterGapMs, gap);
            if (gap > 10 && qEnvironmentVariableIsSet("BENCH_DEBUG"))
                std::fprintf(stderr, "gap %.1f ms from %.1f ms after shown (pooled at +%.1f)\n", gap,
                             (ticks[i - 1] - shownAt) / 1e6, (pooledAt - shownAt) / 1e6);
        }
        else
            out.maxGapMs = std::max(out.maxGapMs, gap);
    }
    return out;
}

StallNumbers measureStall(int words) {
    using attnscope::app::AppSettings;
    using attnscope::app::EngineRunner;
    using attnscope::app::LocalEngineBackend;
    using attnscope::app::MainWindow;
    StallNumbers out;
    out.n = words;
    std::string text;
    for (int i = 0; i < words; ++i) text += "w" + std::to_string(i * 7919 % 100003) + ' ';
    EngineRunner runner(std::make_unique<LocalEngineBackend>());
    MainWindow::Options options;
    options.showErrorDialogs = false;
    options.runOnStart = false;
    options.initialText = QString::fromStdString(text);
    MainWindow window(&runner, AppSettings{}, options);
    window.resize(1400, 900);
    window.show();
    QEventLoop wait;
    QObject::connect(&runner, &EngineRunner::variantsLoaded, &wait, &QEventLoop::quit);
    wait.exec();

    out.first = timeRun(window);
    out.second = timeRun(window);
    // Tab visits (each view takes the result on its first visit), then head switches back on the
    // Heatmap tab: the tabs left behind must not redraw per head.
    const auto timeTab = [&](MainWindow::View view) {
        QElapsedTimer t;
        t.start();
        window.showView(view);
        QCoreApplication::processEvents();
        (void)window.grab();
        return t.nsecsElapsed() / 1e6;
    };
    {
        // The mask view classifies the head on the worker thread: the stall, and the time until drawn.
        StallProbe probe;
        probe.start();
        window.showView(MainWindow::View::Mask);
        QCoreApplication::processEvents();
        (void)window.grab();
        if (window.views()->maskView()->isBuilding()) {
            QEventLoop loop;
            QObject::connect(window.views()->maskView(), &attnscope::views::MaskView::headBuilt, &loop, &QEventLoop::quit);
            loop.exec();
        }
        QCoreApplication::processEvents();
        (void)window.grab();
        out.maskTab.shownMs = probe.elapsedMs();
        out.maskTab.stallMs = probe.stop();
    }
    out.linksTabMs = timeTab(MainWindow::View::Links);
    out.heatmapTabMs = timeTab(MainWindow::View::Heatmap);
    out.windowFirstSwitch = measureChange(window.views()->heatmap(), [&] { window.views()->state()->setHead(1); });
    out.windowCachedSwitch = measureChange(window.views()->heatmap(), [&] { window.views()->state()->setHead(0); });
    // Where the display work goes: each view takes the same result again, timed alone.
    window.flushPendingResult();
    const auto result = window.lastResult();
    if (result) {
        const auto timeView = [&](const char* name, const std::function<void(std::shared_ptr<const engine::RunResult>)>& set) {
            set(nullptr);
            QCoreApplication::processEvents();
            QElapsedTimer t;
            t.start();
            set(result);
            QCoreApplication::processEvents();  // queued replots belong to the cost
            out.perView.emplace_back(name, t.nsecsElapsed() / 1e6);
        };
        timeView("heads grid", [&](auto r) { window.views()->headsGrid()->setResult(r); });
        timeView("heatmap (pooling waited for)", [&](auto r) {
            window.views()->heatmap()->setResult(r);
            window.views()->heatmap()->finishPooling();
        });
        timeView("mask view (classifying waited for)", [&](auto r) {
            window.views()->maskView()->setResult(r);
            window.views()->maskView()->finishBuilding();
        });
        timeView("token links", [&](auto r) { window.views()->tokenLinks()->setResult(r); });
        timeView("compare view", [&](auto r) { window.views()->compareView()->setResult(r); });
        timeView("diagnostics", [&](auto r) { window.views()->diagnostics()->setResult(r); });
    }
    return out;
}

/// With BENCH_DEBUG set: prints every event that takes more than 5 ms (receiver class, event type).
class TimingApplication : public QApplication {
public:
    using QApplication::QApplication;
    bool notify(QObject* receiver, QEvent* event) override {
        if (!m_debug) return QApplication::notify(receiver, event);
        QElapsedTimer t;
        t.start();
        const int type = event->type();
        const bool ok = QApplication::notify(receiver, event);
        const double ms = t.nsecsElapsed() / 1e6;
        if (ms > 5) std::fprintf(stderr, "  event %d to %s: %.1f ms\n", type, receiver->metaObject()->className(), ms);
        return ok;
    }

private:
    bool m_debug = qEnvironmentVariableIsSet("BENCH_DEBUG");
};

}  // namespace

// File ▸ Open Result as the window does it: the file read (ResultFileController's thread), then
// the heatmap given the result and its first head's overview drawn.
void measureOpenedResults(int argc, char** argv) {
    std::printf("| result file | variant | n | read | first overview shown | open to first paint |\n| --- | --- | ---: | ---: | ---: | ---: |\n");
    for (int a = 2; a < argc; ++a) {
        QElapsedTimer clock;
        clock.start();
        auto read = engine::readResultFile(argv[a]);
        const double readS = clock.nsecsElapsed() / 1e9;
        if (!read) {
            std::fprintf(stderr, "bench_heatmap: %s\n", read.error().message.c_str());
            continue;
        }
        InspectionState state;
        HeadHeatmap heatmap;
        showAsInTheWindow(heatmap, state);
        const Change shown = measureChange(&heatmap, [&] { heatmap.setResult(read.value()); });
        const engine::AttentionResult& r = read.value()->results.front();
        std::printf("| %s | `%s` | %lld | %.2f s | %.2f s | %.2f s |\n", QFileInfo(QString::fromLocal8Bit(argv[a])).fileName().toUtf8().constData(),
                    r.variantId.c_str(), static_cast<long long>(r.n), readS, shown.shownMs / 1000.0, readS + shown.shownMs / 1000.0);
        std::fflush(stdout);
    }
}

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    const bool smoke = argc > 1 && std::strcmp(argv[1], "--smoke") == 0;
    const bool firstPaint = argc > 1 && std::strcmp(argv[1], "--first-paint") == 0;
    TimingApplication app(argc, argv);
    if (argc > 2 && std::strcmp(argv[1], "--open-result") == 0) {
        measureOpenedResults(argc, argv);
        return 0;
    }
    if (firstPaint) {
        // `full` as a student pastes text: the engine's run, then the heatmap's first overview
        std::printf("| `full`, 8 heads × 64 | engine run | first overview shown | run to first paint |\n| --- | ---: | ---: | ---: |\n");
        for (const int chars : {4096, 20000}) {
            const RealHeadNumbers r = measureRealHead("", "full", {}, RealInput{chars, true, 8, 64}, 0);
            std::printf("| %d characters | %.2f s | %.2f s | %.2f s |\n", chars, r.runS, r.firstShow.shownMs / 1000.0,
                        r.runS + r.firstShow.shownMs / 1000.0);
            std::fflush(stdout);
        }
        return 0;
    }

    const std::vector<int> sizes = smoke ? std::vector<int>{512, 1024} : std::vector<int>{4096, 16384};
    const int steps = smoke ? 3 : 10;
    std::printf("First show and first visit of a head pool it on a worker thread: \"stall\" is the longest "
                "event-loop gap, \"shown\" the time until the pooled head is painted.\n\n");
    std::printf("| n | first show: stall / shown | zoom step median / max | pan step median / max | head switch, first: stall / shown | head switch, cached median / max |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int n : sizes) {
        const HeatmapNumbers h = measureHeatmap(n, steps);
        std::printf("| %d | %.1f / %.1f ms | %.1f / %.1f ms | %.1f / %.1f ms | %.1f / %.1f ms | %.1f / %.1f ms |\n", h.n,
                    h.firstShow.stallMs, h.firstShow.shownMs, h.zoom.median(), h.zoom.max(), h.pan.median(), h.pan.max(),
                    h.firstSwitch.stallMs, h.firstSwitch.shownMs, h.cachedSwitch.median(), h.cachedSwitch.max());
        std::fflush(stdout);
    }
    std::printf("\nReal results (random projections, 4 heads × 32), the heatmap as in the window: \"shown\" from handing the "
                "result to the heatmap to its first head's overview painted.\n\n");
    std::printf("| result | engine run | first overview: stall / shown | progress steps seen | zoom step median / max | pan step median / max | full-resolution region after | hover exact |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    const std::vector<std::tuple<std::string, std::string, engine::ParamValues, int>> real =
        smoke ? std::vector<std::tuple<std::string, std::string, engine::ParamValues, int>>{
                    {"`longformer` window 16, 4096 words", "longformer", {{"window", std::int64_t{16}}}, 4096},
                    {"`full`, 2100 words", "full", {}, 2100}}
              : std::vector<std::tuple<std::string, std::string, engine::ParamValues, int>>{
                    {"`longformer` window 256, 65536 words", "longformer", {{"window", std::int64_t{256}}}, 65536},
                    {"`full`, 16384 words", "full", {}, 16384}};
    bool realOk = true;
    for (const auto& [label, id, params, words] : real) {
        const RealHeadNumbers r = measureRealHead(label, id, params, RealInput{words}, steps);
        realOk = realOk && r.hoverChecked > 0 && r.hoverExact == r.hoverChecked;
        std::printf("| %s | %.2f s | %.1f ms / %.2f s | %d | %.1f / %.1f ms | %.1f / %.1f ms | %.0f ms | %d / %d |\n",
                    r.label.c_str(), r.runS, r.firstShow.stallMs, r.firstShow.shownMs / 1000.0, r.progressSteps,
                    r.zoom.median(), r.zoom.max(), r.pan.median(), r.pan.max(), r.regionMs, r.hoverExact, r.hoverChecked);
        std::fflush(stdout);
    }
    const StallNumbers s = measureStall(smoke ? 256 : 4096);
    std::printf("\n| long run in the background | request → result shown / pooled head shown | longest event-loop gap while the engine works | gap that shows the result | longest gap after it | 1 ms ticks |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& [label, r] : {std::pair<const char*, StallRun>{"first run, fresh window", s.first},
                                   std::pair<const char*, StallRun>{"same run again", s.second}})
        std::printf("| `full`, %d words, 4 heads × 32, %s | %.0f / %.0f ms | %.1f ms | %.1f ms | %.1f ms | %d |\n", s.n,
                    label, r.runMs, r.pooledMs, r.maxGapMs, r.showGapMs, r.afterGapMs, r.ticks);
    std::printf("\n| in the window, %d words | ms |\n| --- | ---: |\n", s.n);
    std::printf("| Mask tab shown (takes the result, classifies on the worker): stall / drawn | %.1f / %.1f |\n",
                s.maskTab.stallMs, s.maskTab.shownMs);
    std::printf("| Links tab shown (takes the result) | %.1f |\n| back to the Heatmap tab | %.1f |\n", s.linksTabMs,
                s.heatmapTabMs);
    std::printf("| head switch to a new head: stall / pooled head shown | %.1f / %.1f |\n", s.windowFirstSwitch.stallMs,
                s.windowFirstSwitch.shownMs);
    std::printf("| head switch back (cached): stall / shown | %.1f / %.1f |\n", s.windowCachedSwitch.stallMs,
                s.windowCachedSwitch.shownMs);
    std::printf("\n| view taking the %d-word result (on its tab's first visit) | ms |\n| --- | ---: |\n", s.n);
    for (const auto& [name, ms] : s.perView) std::printf("| %s | %.1f |\n", name, ms);
    return s.first.runMs > 0 && s.second.runMs > 0 && realOk ? 0 : 1;
}
