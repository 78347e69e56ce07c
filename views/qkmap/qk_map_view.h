#pragma once
// The Q–K map tab (AttentionViz's query–key map): every query (●) and key (▲) of the selected head
// in one plane — PCA after the keys are moved to the queries' mean and both rescaled to equal mean
// norms, neither of which changes any softmax row (attnscope/qk_map.h), or t-SNE or UMAP computed in the
// background — coloured by kind or by
// position, with lines from the selected query to the keys it weighs most. Clicking a point selects
// its token in every view; the query follows the one hovered elsewhere.

#include "views/widgets/result_view.h"
#include "views/data/latest_job.h"

#include <attnscope/qk_map.h>
#include <attnscope/types.h>

#include <QPointer>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QCPGraph;
class QLabel;
class QMouseEvent;
class QTimer;

namespace attnscope::views {

class InspectionState;
class QkMapGrid;

class QkMapView : public QWidget, public ResultView {
    Q_OBJECT
public:
    /// Lines drawn from the selected query: to the keys it weighs most.
    static constexpr int kLinkedKeys = 5;
    enum class Colouring { Kind, Position };

    explicit QkMapView(QWidget* parent = nullptr);
    ~QkMapView() override;

    void setInspectionState(InspectionState* state) override;
    void setResult(Run result) override;
    /// Hidden, it lets go of the run (it is given again when shown).
    bool park() override {
        setResult(nullptr);
        return true;
    }
    void setColouring(Colouring colouring);
    /// Translation, scaling and the method; t-SNE and UMAP run on the views' worker thread, their progress
    /// in the explanation, a newer request or result cancelling it.
    void setOptions(const engine::QkMapOptions& options);
    bool isComputing() const { return m_computing != nullptr; }

    const std::optional<engine::QkMap>& map() const { return m_map; }
    /// The query whose links are drawn (-1: none), and the keys they go to, strongest first.
    int selectedQuery() const { return m_query; }
    const std::vector<std::int64_t>& linkedKeys() const { return m_linked; }
    QString explanation() const;
    /// What a click at plot coordinates (x, y) selects: the nearest point (as the map lists it), or -1.
    int nearestPoint(double x, double y) const;
    /// Selects point `index` of the map as a click does.
    void selectPoint(int index);

    /// Every head at once as small PCA maps (QkMapGrid) instead of the selected head's map; a click
    /// on one selects its head and shows it large.
    void setAllHeads(bool all);
    bool showsAllHeads() const;
    QkMapGrid* grid() const { return m_grid; }

private:
    void rebuild();
    /// t-SNE or UMAP on the views' worker (a newer request cancels it).
    void startEmbedding(std::size_t index, int head);
    QString methodName() const;
    void showAllHeads(std::size_t index);
    void draw();
    void clicked(QMouseEvent* event);

    QPointer<InspectionState> m_state;
    std::shared_ptr<const engine::RunResult> m_result;
    std::optional<engine::QkMap> m_map;
    engine::QkMapOptions m_options;
    Colouring m_colouring = Colouring::Kind;
    int m_query = -1;
    std::vector<std::int64_t> m_linked;
    LatestJob m_job;
    std::shared_ptr<std::atomic<int>> m_computing;  ///< t-SNE's or UMAP's progress in percent; set to −1 to cancel
    QTimer* m_progressTimer = nullptr;
    QComboBox* m_method = nullptr;
    QComboBox* m_colour = nullptr;
    QCheckBox* m_translate = nullptr;
    QCheckBox* m_scale = nullptr;
    QLabel* m_info = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCheckBox* m_allHeads = nullptr;
    QkMapGrid* m_grid = nullptr;
    /// What the grid shows: the result, its entry, translation and scaling.
    struct GridKey {
        const engine::RunResult* run = nullptr;
        std::size_t index = 0;
        bool translate = false, scale = false;
        bool operator==(const GridKey& o) const { return run == o.run && index == o.index && translate == o.translate && scale == o.scale; }
    };
    GridKey m_gridOf;
};

}  // namespace attnscope::views
