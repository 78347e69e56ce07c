// The Context tab against the real engine and the bundled copy model: a corpus chosen, indexed
// with the model and kept beside it, the selected token's nearest corpus tokens listed (the token
// in the corpus line that equals the text finds itself, cosine 1, with that line as its context),
// the list following the hovered token and the compared vectors, the kept index read back when the
// model opens again; and the view alone.

#include "support/qt_test_support.h"

#include "gui/settings/app_settings.h"
#include "gui/export/figure_exporter.h"
#include "gui/controllers/context_controller.h"
#include "gui/engine/engine_runner.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/panels/model_source_panel.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/window/view_tabs.h"

#include "views/context/context_search_view.h"
#include "views/data/inspection_state.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;
using attnscope::views::ContextSearchView;
namespace engine = attnscope::engine;

namespace {

constexpr int kTimeoutMs = 60000;

QString writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return {};
    file.write(bytes);
    return path;
}

}  // namespace

class TestContextSearch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void findsTheTokenInItsOwnLineAndFollowsTheSelection() {
        QTemporaryDir dir;
        const std::filesystem::path model = std::filesystem::path(dir.path().toStdString()) / "copy-model";
        std::filesystem::copy(std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "samples/copy-model", model);
        const QString corpus = writeFile(dir.filePath(QStringLiteral("corpus.txt")), "a dog ran far\nthe cat sat\nbig red car\n");
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        options.initialText = QStringLiteral("the cat sat");
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.inputs()->variantCombo()->count() > 0, kTimeoutMs);
        ContextSearchView* view = window.views()->contextView();
        window.showView(MainWindow::View::Context);
        QVERIFY(view->title().isEmpty());  // no model: says what to do first
        window.openPath(QString::fromStdString(model.string()));
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->modelLayer == 0, kTimeoutMs);
        QSignalSpy searched(window.contextController(), &attnscope::app::ContextController::searched);
        window.contextController()->chooseCorpus(corpus);
        view->setQuery(4);  // ' c' or 'c': the fourth token of "the cat sat" after <s>
        QTRY_VERIFY_WITH_TIMEOUT(!view->matches().empty() && view->title().contains(QStringLiteral("(token 4)")), kTimeoutMs);
        QVERIFY(view->status().contains(QStringLiteral("kept at")));
        const engine::ContextMatch best = view->matches().front();
        QVERIFY(std::abs(best.cosine - 1.0) < 1e-5);
        QCOMPARE(QString::fromStdString(best.before + best.text + best.after), QStringLiteral("the cat sat"));
        QCOMPARE(best.text, window.lastResult()->input.tokens.at(4).text);
        for (std::size_t i = 1; i < view->matches().size(); ++i) QVERIFY(view->matches()[i].cosine <= view->matches()[i - 1].cosine);
        auto* table = view->findChild<QTableWidget*>();
        QCOMPARE(table->rowCount(), static_cast<int>(view->matches().size()));
        QCOMPARE(table->item(0, 2)->text(), QString::fromStdString(best.text));

        // hovering a token in another tab searches for it
        window.views()->state()->setHovered(2, 0);
        QTRY_VERIFY_WITH_TIMEOUT(view->title().contains(QStringLiteral("(token 2)")) && !view->matches().empty(), kTimeoutMs);
        QCOMPARE(view->matches().front().text, window.lastResult()->input.tokens.at(2).text);

        // the selected head's keys: the same line's token still finds itself
        view->setSpace(engine::ContextSpace::Keys);
        QTRY_VERIFY_WITH_TIMEOUT(view->title().contains(QStringLiteral("keys, head")) && !view->matches().empty(), kTimeoutMs);
        QVERIFY(std::abs(view->matches().front().cosine - 1.0) < 1e-5);

        // the model again: its kept index is read back, not built
        view->setSpace(engine::ContextSpace::Hidden);
        QTRY_VERIFY_WITH_TIMEOUT(!window.contextController()->isIndexing() && window.contextController()->index() &&
                                     window.contextController()->index()->space == engine::ContextSpace::Hidden,
                                 kTimeoutMs);
        window.openPath(QString::fromStdString(model.string()));
        QTRY_VERIFY_WITH_TIMEOUT(view->status().contains(QStringLiteral("read back from")), kTimeoutMs);
        QVERIFY(std::filesystem::exists(model / "attnscope-context"));
    }

    // Without a model: the run's random projections index the corpus (keys or queries: they have
    // no hidden states), and the corpus line that equals the text gives the token itself.
    void randomProjectionsSearchTheirKeys() {
        QTemporaryDir dir;
        const QString corpus = writeFile(dir.filePath(QStringLiteral("corpus.txt")), "a dog ran far\nthe cat sat\nbig red car\n");
        qputenv("XDG_CACHE_HOME", dir.filePath(QStringLiteral("cache")).toUtf8());  // (the kept index goes there)
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.initialText = QStringLiteral("the cat sat");
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() != nullptr, kTimeoutMs);
        ContextSearchView* view = window.views()->contextView();
        window.showView(MainWindow::View::Context);
        window.contextController()->chooseCorpus(corpus);
        QTRY_VERIFY_WITH_TIMEOUT(window.views()->contextView()->matches().empty() && !window.contextController()->isIndexing(), kTimeoutMs);
        view->setSpace(engine::ContextSpace::Keys);
        view->setQuery(1);
        QTRY_VERIFY_WITH_TIMEOUT(!view->matches().empty() && view->title().contains(QStringLiteral("(token 1)")), kTimeoutMs);
        QVERIFY(view->title().contains(QStringLiteral("random projections")));
        const engine::ContextMatch best = view->matches().front();
        QVERIFY(std::abs(best.cosine - 1.0) < 1e-5);
        QCOMPARE(QString::fromStdString(best.before + best.text + best.after), QStringLiteral("the cat sat"));
        QCOMPARE(best.text, std::string("cat"));
        QVERIFY(view->status().contains(QStringLiteral("kept at")));
        QVERIFY(view->status().contains(QStringLiteral("cache")));
        qunsetenv("XDG_CACHE_HOME");
    }

    void aCorpusThatCannotBeReadIsNamed() {
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.runOnStart = false;
        MainWindow window(&runner, AppSettings{}, options);
        window.contextController()->chooseCorpus(QStringLiteral("/nonexistent/corpus.txt"));
        QVERIFY(window.views()->contextView()->status().contains(QStringLiteral("Cannot read")));
        QVERIFY(window.views()->contextView()->status().contains(QStringLiteral("corpus.txt")));
    }

    void theListExportsAsAFigure() {
        ContextSearchView view;
        engine::ContextMatch match;
        match.cosine = 0.5;
        match.before = "a ";
        match.text = "dog";
        match.after = " ran";
        view.setMatches({match, match}, QStringLiteral("Corpus tokens nearest ‘dog’"));
        view.resize(900, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTemporaryDir dir;
        attnscope::app::FigureRequest request;
        request.title = QStringLiteral("context");
        const QString path = dir.filePath(QStringLiteral("context.png"));
        const auto out = attnscope::app::FigureExporter::exportFigure(&view, path, request);
        QVERIFY2(out.ok(), qPrintable(out.error));
        const QImage image(path);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 400);
    }

    void theViewListsMatchesInContext() {
        attnscope::views::InspectionState state;
        ContextSearchView view;
        view.setInspectionState(&state);
        QSignalSpy wanted(&view, &ContextSearchView::searchWanted);
        engine::ContextMatch match;
        match.cosine = 0.9876;
        match.before = "the ";
        match.text = "cat";
        match.after = " sat";
        match.peek = {2, 0.75f};
        match.peekText = "the";
        view.setMatches({match}, QStringLiteral("Corpus tokens nearest ‘cat’"));
        auto* table = view.findChild<QTableWidget*>();
        QVERIFY(table->isVisibleTo(&view));
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("0.988"));
        QCOMPARE(table->item(0, 1)->text(), QStringLiteral("the "));
        QCOMPARE(table->item(0, 2)->text(), QStringLiteral("cat"));
        QCOMPARE(table->item(0, 3)->text(), QStringLiteral(" sat"));
        QCOMPARE(table->item(0, 4)->text(), QStringLiteral("‘the’ (0.75)"));
        view.setMessage(QStringLiteral("Choose a corpus"));
        QVERIFY(!table->isVisibleTo(&view));
        QVERIFY(view.matches().empty());
        state.setHead(1);  // a head change asks for a new search
        QVERIFY(wanted.count() > 0);
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestContextSearch)
#include "test_context_search.moc"
