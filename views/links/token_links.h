#pragma once
// The token link view ("head view" in BertViz): query tokens on one side, key tokens on the
// other, a line per (query, key) weighted by attention. Long inputs show a window of tokens with
// a minimap; attention leaving the window is summarised at its edges.

#include "views/widgets/result_view.h"
#include <attnscope/types.h>
#include <attnscope/weight_overview.h>

#include <QPointer>
#include <QVector>
#include <QWidget>

#include <memory>
#include <vector>

class QCheckBox;
class QLabel;
class QScrollBar;
class QSlider;
class QToolButton;

namespace attnscope::views {

class InspectionState;
class TokenLinkCanvas;
class TokenLinkMinimap;

/// One drawn line: weight is the result's weight of (query, key) for the shown head.
struct TokenLink {
    int query = 0;
    int key = 0;
    float weight = 0.0f;
};

/// Attention of one query row that falls outside the visible window of keys.
struct OutsideMass {
    double before = 0;  ///< keys before the window
    double after = 0;   ///< keys after it
};

class TokenLinks : public QWidget, public ResultView {
    Q_OBJECT
public:
    /// Tokens shown at once; longer inputs scroll and show the minimap.
    static constexpr int kDefaultWindow = 48;

    explicit TokenLinks(QWidget* parent = nullptr);
    ~TokenLinks() override;

    void setInspectionState(InspectionState* state) override;
    void setResult(Run result) override;
    /// Hidden, it lets go of the run (it is given again when shown).
    bool park() override {
        setResult(nullptr);
        return true;
    }

    /// Tokens shown at most (the window follows the canvas's height: a label per text line).
    static constexpr int kMaxWindow = 96;
    /// The automatic threshold draws about this many links per shown token.
    static constexpr int kAutoLinksPerToken = 3;
    /// Weights of a head the view visits whole for its minimap and largest weight (about a second).
    static constexpr std::int64_t kMaxHeadScanWeights = std::int64_t{1} << 27;

    /// Lines are drawn for weights >= threshold x (largest weight of the head). Turns the
    /// automatic threshold off.
    void setThreshold(double fraction);
    /// Automatic (the default): the threshold that draws about kAutoLinksPerToken links per shown
    /// token, chosen again for each result, head and window.
    void setAutoThreshold(bool on);
    bool autoThreshold() const { return m_autoThreshold; }
    double threshold() const { return m_threshold; }
    /// Query tokens on top and keys below (for long words and CJK text) instead of left/right.
    void setHorizontal(bool horizontal);
    bool horizontal() const { return m_horizontal; }
    /// First token of the visible window and its size (kept, instead of following the height).
    void setWindow(int first, int size);
    int windowFirst() const { return m_first; }
    int windowSize() const { return m_window; }
    /// Isolates one token's links (its row as a query, or its column as a key); -1 shows all.
    /// Labels of these tokens drawn bold in orange (Find Token, Ctrl+F).
    void setHighlightedTokens(const QVector<int>& tokens);
    /// Scrolls the window to show `token` and isolates its links as a query.
    void showToken(int token);
    const QVector<int>& highlightedTokens() const { return m_highlighted; }
    void isolateQuery(int query);
    void isolateKey(int key);
    int isolatedQuery() const { return m_isolatedQuery; }
    int isolatedKey() const { return m_isolatedKey; }

    /// The lines currently drawn, in (query, key) order.
    std::vector<TokenLink> visibleLinks() const;
    OutsideMass outsideMass(int query) const;
    int tokenCount() const;
    QString tokenText(int index) const;
    /// Largest weight of the shown head (the threshold's reference), 0 without weights.
    float headMax() const { return m_headMax; }
    /// True when headMax() is the visible window's largest weight (a head past kMaxHeadScanWeights).
    bool headMaxOfWindow() const { return m_headMaxOfWindow; }
    const engine::AttentionResult* shownResult() const;

Q_SIGNALS:
    void tokenHovered(int index, bool asQuery);

private:
    friend class TokenLinkCanvas;
    friend class TokenLinkMinimap;
    void rebuild();
    void updateChrome();
    void showWindow(int first, int size);
    void fitWindowToCanvas();
    void applyThreshold(double fraction);
    void chooseThreshold();
    int shownSlots() const;
    int head() const;
    /// The shown head's weight, from the visible window's tile when inside it.
    float weight(int query, int key) const;
    /// Reads the visible window's weights (one tile) after a scroll or a new result.
    void refreshWindowTile();

    std::shared_ptr<const engine::RunResult> m_result;
    QPointer<InspectionState> m_state;
    TokenLinkCanvas* m_canvas = nullptr;
    TokenLinkMinimap* m_minimap = nullptr;
    QScrollBar* m_scroll = nullptr;
    QSlider* m_thresholdSlider = nullptr;
    QCheckBox* m_horizontalBox = nullptr;
    QToolButton* m_autoButton = nullptr;
    bool m_autoThreshold = true;
    QVector<int> m_highlighted;
    bool m_fixedWindow = false;
    QLabel* m_status = nullptr;
    double m_threshold = 0.05;
    bool m_horizontal = false;
    int m_first = 0;
    int m_window = kDefaultWindow;
    int m_isolatedQuery = -1;
    int m_isolatedKey = -1;
    float m_headMax = 0.0f;
    /// m_headMax is the visible window's largest weight, not the head's: the head has more than
    /// kMaxHeadScanWeights weights (a million-token result), too many to visit on this thread.
    bool m_headMaxOfWindow = false;
    engine::WeightOverview m_overview;  ///< the whole head, pooled for the minimap and the largest weight
    engine::WeightTile m_windowTile;    ///< the visible window [m_first, m_first + m_window)²
};

}  // namespace attnscope::views
