#pragma once
// Training data of the built-in trainer: each example is a byte sequence in a RoBERTa-style
// frame, <s> x | y </s>, where the positions to predict are replaced by <mask> in the input.

#include <attnscope/train.h>

#include <ATen/ATen.h>

#include <cstdint>
#include <random>
#include <string>

namespace attnscope::engine {

/// The trainer's vocabulary: five specials, then the 256 bytes.
namespace byte_vocab {
constexpr std::int64_t kBos = 0, kPad = 1, kEos = 2, kUnk = 3, kMask = 4, kFirstByte = 5, kSize = 261;
inline std::int64_t idOf(unsigned char byte) { return kFirstByte + byte; }
}  // namespace byte_vocab

struct TrainBatch {
    at::Tensor input;   ///< [batch, n] int64 ids
    at::Tensor target;  ///< [batch, n] int64 ids; -1 where nothing is predicted
};

class TaskData {
public:
    /// Throws EngineError for an unknown task, a text too short, or absurd lengths.
    TaskData(const TrainOptions& options);
    std::int64_t sequenceLength() const { return m_n; }
    double chanceAccuracy() const { return m_chance; }
    TrainBatch next(std::int64_t batch, std::mt19937_64& rng) const;

private:
    std::string m_task;
    std::string m_text;
    std::int64_t m_length = 0;  ///< symbols in x (tasks) or bytes per window (text)
    std::int64_t m_n = 0;       ///< tokens per example, specials included
    double m_chance = 0;
};

}  // namespace attnscope::engine
