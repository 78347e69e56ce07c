// File → Export Star-Transformer Cycles…: the star player's frames for slides
// (gui/export/star_cycle_export.h).

#include "gui/main_window.h"
#include "gui/view_tabs.h"

#include "gui/export/export_controller.h"
#include "gui/export/star_cycle_export.h"

#include "views/diagnostics/diagnostics_stack.h"
#include "views/diagnostics/star_player.h"

#include <QDir>
#include <QFileDialog>
#include <QMessageBox>

namespace attnscope::app {

QString MainWindow::exportStarCyclesTo(const QString& folder) {
    const StarCycleExport out = exportStarCycles(m_views->diagnostics()->starPlayer(), folder, m_export->dpi());
    if (!out.error.isEmpty()) {
        setStatusMessage(out.error, out.error);
        return out.error;
    }
    setStatusMessage(tr("Wrote %1 cycle frames and %2.").arg(out.frames).arg(QDir::toNativeSeparators(out.stripPath)));
    return {};
}

void MainWindow::exportStarCyclesInteractive() {
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Export Star-Transformer Cycles"), m_export->lastFolder());
    if (folder.isEmpty()) return;
    m_export->setLastFolder(folder);
    const QString error = exportStarCyclesTo(folder);
    if (!error.isEmpty() && m_options.showErrorDialogs) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot export the cycles"), error, QMessageBox::Ok, this);
        box->setTextFormat(Qt::PlainText);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
}

}  // namespace attnscope::app
