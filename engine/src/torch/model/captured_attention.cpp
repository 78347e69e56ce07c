#include "torch/model/captured_attention.h"

#include <attnscope/model_checkpoint.h>
#include <attnscope/safetensors.h>

#include "attention/run/request_checks.h"
#include "base/api/strict_json.h"

#include <cmath>
#include <filesystem>
#include <sstream>

namespace attnscope::engine {

namespace {

constexpr double kRowTolerance = 1e-3;

Error invalid(const std::string& path, const std::string& what) { return Error{ErrorCode::InvalidInput, path + ": " + what}; }

std::string shapeText(const std::vector<std::uint64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// A 4-D float tensor's shape, or an error naming what it should be.
Result<std::vector<std::uint64_t>> fourDims(const SafetensorsFile& file, const StTensorInfo& info, const char* expected) {
    const bool floating = info.dtype == StDType::F32 || info.dtype == StDType::F16 || info.dtype == StDType::BF16 ||
                          info.dtype == StDType::F64;
    if (!floating)
        return invalid(file.path(), "tensor '" + info.name + "' has dtype " + stDTypeName(info.dtype) + "; it must be F32, F16 or BF16");
    if (info.shape.size() != 4 || info.shape[0] == 0 || info.shape[1] == 0 || info.shape[2] == 0 || info.shape[3] == 0)
        return invalid(file.path(), "tensor '" + info.name + "' has shape " + shapeText(info.shape) + "; it must be " + expected);
    return info.shape;
}

// The whole tensor as float32 [d0, d1, d2, d3], checked finite (the first bad entry named).
Result<at::Tensor> readFinite(const SafetensorsFile& file, const StTensorInfo& info) {
    std::vector<std::int64_t> shape(info.shape.begin(), info.shape.end());
    at::Tensor t = at::empty(shape, at::kFloat);
    auto finite = file.readF32Into(info.name, t.data_ptr<float>(), static_cast<std::size_t>(t.numel()));
    if (!finite) return finite.error();
    if (!finite.value()) {
        const std::int64_t at = at::logical_not(at::isfinite(t)).reshape({-1}).nonzero()[0][0].item<std::int64_t>();
        std::int64_t rest = at;
        std::vector<std::int64_t> index(4);
        for (int d = 3; d >= 0; --d) {
            index[static_cast<std::size_t>(d)] = rest % shape[static_cast<std::size_t>(d)];
            rest /= shape[static_cast<std::size_t>(d)];
        }
        std::ostringstream where;
        where << info.name << "[" << index[0] << ", " << index[1] << ", " << index[2] << ", " << index[3] << "] is "
              << t.reshape({-1})[at].item<float>();
        return invalid(file.path(), where.str() + ": every value must be finite");
    }
    return t;
}

Result<TokenizedInput> readTokens(const SafetensorsFile& file, std::int64_t n) {
    const auto& metadata = file.header().metadata;
    const auto it = metadata.find("tokens");
    if (it == metadata.end())
        return invalid(file.path(), "no \"tokens\" in the metadata (a JSON list of the " + std::to_string(n) + " token strings)");
    auto parsed = parseStrictJson(it->second, file.path() + " metadata \"tokens\"");
    if (!parsed) return parsed.error();
    const auto& list = parsed.value();
    if (!list.is_array() || static_cast<std::int64_t>(list.size()) != n)
        return invalid(file.path(), "metadata \"tokens\" must be a JSON list of " + std::to_string(n) + " strings (n of the tensors), got " +
                                        (list.is_array() ? std::to_string(list.size()) + " entries" : std::string(list.type_name())));
    TokenizedInput tokens;
    tokens.kind = TokenizerKind::Model;
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string()) return invalid(file.path(), "metadata \"tokens\"[" + std::to_string(i) + "] is not a string");
        Token t;
        t.text = list[i].get<std::string>();
        t.id = static_cast<std::int64_t>(i);
        t.byteBegin = static_cast<std::int64_t>(tokens.text.size());
        tokens.text += t.text;
        t.byteEnd = static_cast<std::int64_t>(tokens.text.size());
        tokens.tokens.push_back(std::move(t));
    }
    return tokens;
}

// Each row of each head a probability distribution: sums within the tolerance, no negatives.
Result<void> checkRows(const std::string& path, const at::Tensor& attention) {
    const at::Tensor sums = attention.sum(-1, /*keepdim=*/false, at::kDouble);  // [L, H, n]
    const at::Tensor off = (sums - 1).abs() > kRowTolerance;
    if (off.any().item<bool>()) {
        const at::Tensor where = off.nonzero()[0];
        const std::int64_t l = where[0].item<std::int64_t>(), h = where[1].item<std::int64_t>(), i = where[2].item<std::int64_t>();
        std::ostringstream message;
        message << "attentions[" << l << ", " << h << ", " << i << "] sums to " << sums[l][h][i].item<double>()
                << "; every row must sum to 1 within 1e-3 (softmax weights, after any mask)";
        return invalid(path, message.str());
    }
    if ((attention < 0).any().item<bool>()) return invalid(path, "attentions has negative weights; attention weights are never below 0");
    return {};
}

Result<bool> readCausal(const SafetensorsFile& file, const at::Tensor* attention) {
    const auto& metadata = file.header().metadata;
    if (const auto it = metadata.find("causal"); it != metadata.end()) {
        if (it->second != "true" && it->second != "false")
            return invalid(file.path(), "metadata \"causal\" must be \"true\" or \"false\", got \"" + it->second + "\"");
        return it->second == "true";
    }
    if (attention == nullptr || attention->size(2) < 2) return false;
    // no weight on a later key anywhere: a decoder's
    return !at::triu(*attention, 1).gt(1e-6).any().item<bool>();
}

}  // namespace

bool isCapturedAttentionPath(const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) && sniffFile(path).kind != FileKind::Gguf;  // a GGUF file is a model
}

Result<CapturedAttention> readCapturedAttention(const std::string& path, std::uint64_t budget) {
    auto opened = SafetensorsFile::open(path);
    if (!opened) return opened.error();
    const SafetensorsFile& file = *opened.value();
    const StTensorInfo* attention = file.find("attentions");
    const StTensorInfo* q = file.find("q");
    const StTensorInfo* k = file.find("k");
    const StTensorInfo* v = file.find("v");
    if (attention == nullptr && q == nullptr && k == nullptr && v == nullptr)
        return invalid(path, "neither 'attentions' [layers, heads, n, n] nor 'q', 'k', 'v' [layers, heads, n, d]: not captured attention");
    if ((q || k || v) && !(q && k && v)) return invalid(path, "'q', 'k' and 'v' come together; this file has only some of them");

    CapturedAttention out;
    out.path = path;
    std::vector<std::uint64_t> shape;
    if (attention) {
        auto dims = fourDims(file, *attention, "[layers, heads, n, n]");
        if (!dims) return dims.error();
        shape = dims.value();
        if (shape[2] != shape[3])
            return invalid(path, "tensor 'attentions' has shape " + shapeText(shape) + "; its last two dimensions (queries, keys) must be equal");
    }
    std::vector<std::uint64_t> qkvShape;
    for (const StTensorInfo* t : {q, k, v}) {
        if (!t) continue;
        auto dims = fourDims(file, *t, "[layers, heads, n, d]");
        if (!dims) return dims.error();
        if (!qkvShape.empty() && dims.value() != qkvShape)
            return invalid(path, "'q', 'k' and 'v' must have one shape; '" + t->name + "' has " + shapeText(dims.value()) + ", 'q' " +
                                     shapeText(qkvShape));
        qkvShape = dims.value();
    }
    if (!shape.empty() && !qkvShape.empty() && (shape[0] != qkvShape[0] || shape[1] != qkvShape[1] || shape[2] != qkvShape[2]))
        return invalid(path, "'attentions' " + shapeText(shape) + " and 'q' " + shapeText(qkvShape) +
                                 " disagree on layers, heads or tokens");
    if (shape.empty()) shape = {qkvShape[0], qkvShape[1], qkvShape[2], qkvShape[2]};
    out.layers = static_cast<std::int64_t>(shape[0]);
    out.heads = static_cast<std::int64_t>(shape[1]);
    out.n = static_cast<std::int64_t>(shape[2]);
    out.headDim = qkvShape.empty() ? 0 : static_cast<std::int64_t>(qkvShape[3]);

    const std::uint64_t floats = shape[0] * shape[1] * shape[2] * (shape[3] + 3 * (qkvShape.empty() ? 0 : qkvShape[3]));
    if (floats * sizeof(float) > budget)
        return Error{ErrorCode::OutOfBudget, path + ": the captured tensors need " + formatBytes(floats * sizeof(float)) +
                                                 " in float32, over the memory budget of " + formatBytes(budget)};
    auto tokens = readTokens(file, out.n);
    if (!tokens) return tokens.error();
    out.tokens = std::move(tokens.value());
    if (const auto it = file.header().metadata.find("model"); it != file.header().metadata.end()) out.model = it->second;

    at::Tensor weights;
    if (attention) {
        auto read = readFinite(file, *attention);
        if (!read) return read.error();
        weights = read.value();
        if (auto rows = checkRows(path, weights); !rows) return rows.error();
    }
    auto causal = readCausal(file, attention ? &weights : nullptr);
    if (!causal) return causal.error();
    out.causal = causal.value();
    if (q) {
        at::Tensor parts[3];
        int i = 0;
        for (const StTensorInfo* t : {q, k, v}) {
            auto read = readFinite(file, *t);
            if (!read) return read.error();
            parts[i++] = read.value();
        }
        for (std::int64_t l = 0; l < out.layers; ++l) {
            out.q.push_back(parts[0][l].contiguous());
            out.k.push_back(parts[1][l].contiguous());
            out.v.push_back(parts[2][l].contiguous());
        }
    }
    for (std::int64_t l = 0; l < out.layers; ++l) {
        if (attention) {
            out.attention.push_back(weights[l].contiguous());
            continue;
        }
        // softmax(q kᵀ / √d), later keys masked when the file says causal
        at::Tensor scores = at::bmm(out.q[static_cast<std::size_t>(l)], out.k[static_cast<std::size_t>(l)].transpose(1, 2))
                                .mul_(1.0 / std::sqrt(static_cast<double>(out.headDim)));
        if (out.causal) scores.masked_fill_(at::ones({out.n, out.n}, at::kBool).triu(1), -std::numeric_limits<float>::infinity());
        out.attention.push_back(at::softmax(scores, -1));
    }
    return out;
}

}  // namespace attnscope::engine
