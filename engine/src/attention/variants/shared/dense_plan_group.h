#pragma once
// The dense-plan kernel's per-worker scratch and one group's computation (dense_plan_group.cpp);
// runPatternKernel (dense_plan_run.cpp) prepares the scratch per head and runs the groups.
// Internal to that kernel.

#include "attention/pattern/block_pattern.h"
#include "attention/variants/shared/dense_plan_rows.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace attnscope::engine {

constexpr float kDenseMinusInf = -std::numeric_limits<float>::infinity();
// Spare floats before the scores and after each score row, for whole panels of keys (8).
constexpr std::int64_t kScorePad = 8;

// Scratch of one worker thread of the dense-plan kernel.
struct DenseScratch {
    // pooled scratch (BufferPool::scratch); null when the plan needs none of that kind
    float *scores = nullptr, *gatherK = nullptr, *gatherV = nullptr, *part = nullptr, *residue = nullptr,
          *keyPanels = nullptr, *gathered = nullptr, *strided = nullptr;
    std::int64_t preparedHead = -1;    ///< the head whose copies the scratch holds
    ResidueRows residueK, residueV;    ///< one residue's keys and values (large-step segments)
    RowSource keySource, valueSource;  ///< this item's head
    float* accMax = nullptr;  // [n] running max / sum of split rows (merge plans)
    float* accSum = nullptr;
    std::vector<std::uint8_t> groupStatus;
    std::vector<std::int64_t> rowLo, rowHi;  ///< each row's allowed interval of the group's keys
    std::vector<float> mergeScale;           ///< [2 * rows] rescaling factors of a merge
    const std::uint8_t* keyPadding = nullptr;  ///< [m] 1 = padded key; null = none
    bool masking = false;  ///< padded or excluded keys exist in this head: rows need maskKeys()
    float* rowShift = nullptr;  ///< this head's [n] row statistics (single-cover plans fill them per row):
    float* rowSum = nullptr;    ///< every weight is exp(scale·s − shift) / sum
    std::int64_t entries = 0, allowed = 0, emptyRows = 0;
};


/// How a group's rows end: one cover of each row (softmax and statistics in place), or one part of
/// rows split over several groups (merged by log-sum-exp into the rows' running result).
enum class GroupRows { Whole, Part };

/// One group of the dense plan on one worker: scores = Q_rows K_keys^T, mask + softmax, output =
/// P V_keys. qp, kp, vp: the head's [n, d] / [m, d] rows; op: its output rows; rowStatus: its [n]
/// status (1 = no allowed key).
void runDenseGroup(const DensePlan& plan, const DenseGroup& g, const float* qp, const float* kp, const float* vp,
                   float* op, std::int64_t d, float scale, GroupRows rowsMode, DenseScratch& ws, std::uint8_t* rowStatus);

}  // namespace attnscope::engine
