#include "torch/train/train_tasks.h"

#include "base/runtime/run_context.h"

#include <set>

namespace attnscope::engine {
namespace {

constexpr int kAlphabet = 26;  // x is drawn from 'a'..'z'
constexpr double kMaskedShare = 0.15;

}  // namespace

TaskData::TaskData(const TrainOptions& options) : m_task(options.task) {
    const bool text = m_task == "text";
    if (!text && m_task != "copy" && m_task != "reverse" && m_task != "duplicate")
        throw EngineError(ErrorCode::InvalidArgument, "unknown task '" + m_task + "' (copy, reverse, duplicate, text)");
    m_length = options.length > 0 ? options.length : (text ? 48 : 8);
    if (m_length < 1 || m_length > 1024)
        throw EngineError(ErrorCode::InvalidArgument, "length must be in [1, 1024], got " + std::to_string(m_length));
    if (text) {
        m_text = options.text;
        if (static_cast<std::int64_t>(m_text.size()) < m_length + 1)
            throw EngineError(ErrorCode::InvalidArgument, "task 'text' needs a training text of more than " +
                                                              std::to_string(m_length) + " bytes (--text-file)");
        m_n = m_length + 2;
        const std::set<unsigned char> distinct(m_text.begin(), m_text.end());
        m_chance = 1.0 / static_cast<double>(distinct.size());
    } else {
        const std::int64_t outputs = m_task == "duplicate" ? 2 * m_length : m_length;
        m_n = 1 + m_length + 1 + outputs + 1;  // <s> x | y </s>
        m_chance = 1.0 / kAlphabet;
    }
}

TrainBatch TaskData::next(std::int64_t batch, std::mt19937_64& rng) const {
    using namespace byte_vocab;
    at::Tensor input = at::full({batch, m_n}, kPad, at::kLong);
    at::Tensor target = at::full({batch, m_n}, -1, at::kLong);
    auto in = input.accessor<std::int64_t, 2>();
    auto out = target.accessor<std::int64_t, 2>();
    for (std::int64_t b = 0; b < batch; ++b) {
        in[b][0] = kBos;
        in[b][m_n - 1] = kEos;
        if (m_task == "text") {
            std::uniform_int_distribution<std::size_t> start(0, m_text.size() - static_cast<std::size_t>(m_length));
            const std::size_t s = start(rng);
            std::uniform_real_distribution<double> coin(0.0, 1.0);
            bool any = false;
            for (std::int64_t i = 0; i < m_length; ++i) {
                const std::int64_t id = idOf(static_cast<unsigned char>(m_text[s + static_cast<std::size_t>(i)]));
                const bool masked = coin(rng) < kMaskedShare || (!any && i == m_length - 1);
                in[b][1 + i] = masked ? kMask : id;
                if (masked) out[b][1 + i] = id;
                any = any || masked;
            }
            continue;
        }
        std::uniform_int_distribution<int> letter(0, kAlphabet - 1);
        std::vector<std::int64_t> x(static_cast<std::size_t>(m_length));
        for (auto& c : x) c = idOf(static_cast<unsigned char>('a' + letter(rng)));
        std::vector<std::int64_t> y;
        if (m_task == "copy") y = x;
        else if (m_task == "reverse") y.assign(x.rbegin(), x.rend());
        else
            for (auto c : x) y.insert(y.end(), {c, c});
        for (std::int64_t i = 0; i < m_length; ++i) in[b][1 + i] = x[static_cast<std::size_t>(i)];
        in[b][1 + m_length] = idOf('|');
        for (std::size_t i = 0; i < y.size(); ++i) {
            const std::int64_t pos = 2 + m_length + static_cast<std::int64_t>(i);
            in[b][pos] = kMask;
            out[b][pos] = y[i];
        }
    }
    return {input, target};
}

}  // namespace attnscope::engine
