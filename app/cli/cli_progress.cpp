#include "cli/cli_progress.h"

#include <chrono>
#include <csignal>
#include <signal.h>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

namespace attnscope::cli {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void onInterrupt(int signal) { g_signal = signal; }

constexpr double kRedrawSeconds = 0.1;

std::string formatSeconds(double s) {
    char text[32];
    if (s < 60) std::snprintf(text, sizeof text, "%.1f s", s);
    else std::snprintf(text, sizeof text, "%d min %02d s", static_cast<int>(s / 60), static_cast<int>(s) % 60);
    return text;
}

/// What the progress line remembers between calls: its stage's start, for the estimate.
struct ProgressLine {
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point stageStarted = started, drawn{};
    std::string stage;
};

}  // namespace

void installInterruptHandlers() {
    struct sigaction action {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;  // a second Ctrl-C takes the default action: the process ends
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

int interruptSignal() { return static_cast<int>(g_signal); }

engine::ProgressFn commandProgress(bool show) {
    auto line = std::make_shared<ProgressLine>();
    return [show, line](const engine::Progress& p) {
        if (g_signal != 0) return false;
        if (!show) return true;
        const auto now = std::chrono::steady_clock::now();
        if (line->stage != p.stage) {
            line->stage = p.stage;
            line->stageStarted = now;
        } else if (std::chrono::duration<double>(now - line->drawn).count() < kRedrawSeconds) {
            return true;
        }
        line->drawn = now;
        const double elapsed = std::chrono::duration<double>(now - line->started).count();
        const double inStage = std::chrono::duration<double>(now - line->stageStarted).count();
        std::string text = "\r" + line->stage;
        if (p.total > 0) {
            text += " " + std::to_string(100 * p.done / p.total) + " %";
            if (p.done > 0 && p.done < p.total && inStage > 0.5)
                text += " · about " + formatSeconds(inStage * static_cast<double>(p.total - p.done) / static_cast<double>(p.done)) + " left";
        }
        text += " · " + formatSeconds(elapsed) + "      ";
        std::cerr << text << std::flush;
        return true;
    };
}

void clearProgressLine(bool show) {
    if (show) std::cerr << "\r" << std::string(60, ' ') << "\r" << std::flush;
}

int interruptedExit(const std::string& what) {
    const int signal = interruptSignal();
    const char* name = signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT (Ctrl-C)" : nullptr;
    std::cerr << "attnscope-cli: " << what << " was cancelled" << (name ? std::string(" by ") + name : std::string())
              << "; no output was written\n";
    return 128 + (signal != 0 ? signal : SIGINT);
}

}  // namespace attnscope::cli
