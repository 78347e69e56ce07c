#pragma once
// Reformer's LSH at work for the selected head: tokens coloured by bucket for each hashing round,
// the sorted order of each round cut into chunks, and which chunk sees which. Reads the
// diagnostics `buckets` [H, n_hashes, n], `sorted` [H, n_hashes, n_pad] (recomputed by the
// engine's rule when absent) and `rotations` (shape only).

#include "views/diagnostics/result_page.h"
#include <attnscope/types.h>

#include <QColor>
#include <QPointer>
#include <QString>
#include <QVector>
#include <QWidget>

#include <memory>
#include <vector>

class QCustomPlot;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace attnscope::views {

class InspectionState;

class LshView : public ResultPage {
    Q_OBJECT
public:
    explicit LshView(QWidget* parent = nullptr);
    ~LshView() override;

    /// Follows state->head(); shows state->resultIndex() when it is a reformer result, else the
    /// first reformer result of the run.

    // Data accessors for tests (the plotted cells, not pixels).
    bool hasBuckets() const { return m_shownHead >= 0; }
    int shownHead() const { return m_shownHead; }
    int rounds() const { return m_rounds; }
    int bucketCount() const { return m_buckets; }
    /// Bucket of token `position` in `round` as plotted; NaN outside.
    double bucketCell(int round, int position) const;
    /// Colour the bucket panel paints that cell with.
    QColor bucketColor(int round, int position) const;
    /// Token in sorted slot `slot` of `round` (-1 = chunk padding) and the bucket plotted there.
    long long sortedToken(int round, int slot) const;
    double sortedCell(int round, int slot) const;
    int chunkLength() const { return m_chunkLen; }
    int chunkCount() const { return m_chunkCount; }
    /// Chunks (of the whole list, all rounds) that chunk `chunk` attends, in window order.
    QVector<int> chunksSeenBy(int chunk) const;
    QString chunkText() const;
    QString message() const;
    QCustomPlot* bucketPlot() const { return m_bucketPlot; }
    QCustomPlot* sortedPlot() const { return m_sortedPlot; }

    /// The button under a short text's note: the setting that shows hashing at work.
    QPushButton* suggestionButton() const { return m_suggest; }

Q_SIGNALS:
    /// Intent: run reformer again with "name=value" (the note's suggestion).
    void settingSuggested(const QString& variantId, const QString& setting);

private:
    /// Why hashing shows little when a round holds two chunks or fewer, and what to set.
    QString fewChunksNote(int n, int chunksPerRound);
    void rebuild() override;
    void showMessage(const QString& text);

    QLabel* m_info = nullptr;
    QPushButton* m_suggest = nullptr;  // "Try chunk_len = 7" when a round holds two chunks or fewer
    QString m_suggestion;              // its "name=value"
    QCustomPlot* m_bucketPlot = nullptr;
    QCustomPlot* m_sortedPlot = nullptr;
    QPlainTextEdit* m_chunks = nullptr;
    std::vector<long long> m_sorted;  // [rounds, slots]
    int m_shownHead = -1;
    int m_rounds = 0;
    int m_buckets = 0;
    int m_slots = 0;
    int m_chunkLen = 0;
    int m_chunkCount = 0;
    int m_before = 0;
    int m_after = 0;
};

}  // namespace attnscope::views
