#pragma once
// Progress of a benchmark's cases on stderr when it is a terminal and --quiet was not given:
// "[12/40] 30 % longformer n=4096 · 35 s · about 1 min 20 s left". The tables go to stdout,
// so redirecting them keeps the line on the terminal and out of the file.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace attnscope::bench {

class BenchProgress {
public:
    BenchProgress(long total, bool quiet) : m_total(total), m_show(!quiet && isatty(STDERR_FILENO)) {}
    ~BenchProgress() { finish(); }

    /// Case `what` starts (the cases before it are done).
    void start(const std::string& what) {
        if (!m_show) return;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
        std::string line = "\r[" + std::to_string(m_done + 1) + "/" + std::to_string(m_total) + "] " +
                           std::to_string(100 * m_done / (m_total > 0 ? m_total : 1)) + " % " + what + " · " + seconds(elapsed);
        if (m_done > 0 && m_done < m_total)
            line += " · about " + seconds(elapsed * static_cast<double>(m_total - m_done) / static_cast<double>(m_done)) + " left";
        std::fprintf(stderr, "%s      ", line.c_str());
        std::fflush(stderr);
        ++m_done;
    }
    /// Clears the line (before the program prints to stderr, and at the end).
    void finish() {
        if (m_show && m_done > 0) std::fprintf(stderr, "\r%80s\r", "");
    }

private:
    static std::string seconds(double s) {
        char text[32];
        if (s < 60) std::snprintf(text, sizeof text, "%.0f s", s);
        else std::snprintf(text, sizeof text, "%d min %02d s", static_cast<int>(s / 60), static_cast<int>(s) % 60);
        return text;
    }
    long m_total = 0, m_done = 0;
    bool m_show = false;
    std::chrono::steady_clock::time_point m_started = std::chrono::steady_clock::now();
};

/// True when `argv` holds --quiet (which the benchmark then ignores as an option of its own).
inline bool quietFlag(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--quiet") return true;
    return false;
}

}  // namespace attnscope::bench
