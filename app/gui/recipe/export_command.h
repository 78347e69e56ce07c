#pragma once
// `attnscope export RECIPE.json --out-dir DIR`: batch figures from a recipe, headless (the GUI
// binary on the offscreen platform, DESIGN.md). Messages and progress go to stderr.

#include <QStringList>

namespace attnscope::app {

/// True when argv[1] is "export": main() then picks the offscreen platform before QApplication.
bool isExportCommand(int argc, char** argv);

/// Runs the command with the application's arguments (program name first, then "export").
/// Exit status: 0 done; 2 bad arguments or a recipe that breaks a rule; 1 an unreadable input,
/// an unwritable output folder, or a failed run or write.
int runExportCommand(const QStringList& arguments);

}  // namespace attnscope::app
