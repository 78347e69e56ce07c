#pragma once
// `--screenshot PATH`: the window grabbed once what it was asked to show is drawn (the run's
// result, the atlas, the error curve, a Cost measurement, the Context tab's search…), then the
// application quits: 0, or non-zero when the work failed (the README's and the tests' screenshots).

namespace attnscope::app {

class EngineRunner;
class MainWindow;
struct Startup;

/// Arms the grab: connects to whatever the startup's view waits for, and a timeout.
void armScreenshot(MainWindow& window, EngineRunner& runner, const Startup& s);

}  // namespace attnscope::app
