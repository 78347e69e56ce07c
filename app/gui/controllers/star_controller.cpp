#include "gui/controllers/star_controller.h"

#include "gui/engine/engine_runner.h"
#include "gui/export/export_controller.h"
#include "gui/export/star_cycle_export.h"
#include "gui/engine/to_gui.h"

#include "views/diagnostics/star_player.h"

#include <QDir>
#include <QFileDialog>
#include <QMessageBox>
#include <QPointer>

namespace attnscope::app {

StarController::StarController(EngineRunner* runner, views::StarPlayer* player, QWidget* window, QObject* parent)
    : QObject(parent), m_player(player), m_window(window) {
    connect(m_player, &views::StarPlayer::starRequested, this, [runner, player](const engine::StarRequest& request) {
        runner->postTask([player = QPointer<views::StarPlayer>(player), request](EngineBackend& backend) {
            auto pass = backend.runStar(request, {});
            toGui([player, request, pass = std::move(pass)] {
                if (!player) return;
                if (pass) player->setPass(request, pass.value());
                else player->setFailed(QString::fromStdString(pass.error().message));
            });
            return false;
        });
    });
    connect(m_player, &views::StarPlayer::openModelRequested, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(m_window, tr("Open Star-Transformer Model"));
        if (!folder.isEmpty()) m_player->setModelFolder(folder);
    });
}

void StarController::setExports(ExportController* exports, bool dialogs) {
    m_exports = exports;
    m_dialogs = dialogs;
}

QString StarController::exportCyclesTo(const QString& folder) {
    const StarCycleExport out = exportStarCycles(m_player, folder, m_exports->dpi());
    if (!out.error.isEmpty()) {
        Q_EMIT report(out.error, out.error);
        return out.error;
    }
    Q_EMIT report(tr("Wrote %1 cycle frames and %2.").arg(out.frames).arg(QDir::toNativeSeparators(out.stripPath)));
    return {};
}

void StarController::exportCyclesInteractive() {
    const QString folder = QFileDialog::getExistingDirectory(m_window, tr("Export Star-Transformer Cycles"), m_exports->lastFolder());
    if (folder.isEmpty()) return;
    m_exports->setLastFolder(folder);
    const QString error = exportCyclesTo(folder);
    if (!error.isEmpty() && m_dialogs) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot export the cycles"), error, QMessageBox::Ok, m_window);
        box->setTextFormat(Qt::PlainText);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
}

}  // namespace attnscope::app
