// Shared main of the Qt test executables: offscreen when no platform is set, a fixed font DPI
// so layout sizes do not depend on the machine, and test-mode settings paths.
// ATTNSCOPE_QT_TEST_CLASS=TestName runs that class only (QtTest's own arguments pick functions).

#include "qt_test_support.h"

#include <QApplication>
#include <QStandardPaths>
#include <QTest>

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qputenv("QT_FONT_DPI", "96");
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    int failures = 0;
    for (const auto& make : attnscope::testing::testRegistry()) {
        const std::unique_ptr<QObject> test = make();
        const QByteArray only = qgetenv("ATTNSCOPE_QT_TEST_CLASS");
        if (!only.isEmpty() && only != test->metaObject()->className()) continue;
        failures += QTest::qExec(test.get(), argc, argv);
    }
    return failures == 0 ? 0 : 1;
}
