#pragma once
// Long work on the command line: progress on stderr when it is a terminal (stage, percent,
// elapsed, estimated remaining), and Ctrl-C (SIGINT) or SIGTERM cancelling through the engine's
// progress callback, so the command stops at the next check, writes nothing and exits with
// 128 + the signal (130, 143).

#include <attnscope/progress.h>

#include <string>

namespace attnscope::cli {

/// The first SIGINT or SIGTERM asks the running command to stop; a second one ends the process
/// at once (the default action is restored after the first).
void installInterruptHandlers();
/// The signal received (SIGINT, SIGTERM), or 0.
int interruptSignal();

/// A progress callback that returns false once a signal arrived; with `show`, it draws
/// "attention 42 % · 3.1 s · about 4 s left" on stderr, at most ten times a second.
engine::ProgressFn commandProgress(bool show);
/// Clears the progress line (when shown).
void clearProgressLine(bool show);
/// After a cancelled command: says what was cancelled and why, and returns 128 + the signal
/// (130 without one).
int interruptedExit(const std::string& what);

}  // namespace attnscope::cli
