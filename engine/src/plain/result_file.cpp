#include <attnscope/result_file.h>
#include <attnscope/safetensors.h>
#include <attnscope/tokenize.h>

#include "plain/pattern_listing.h"

#include <nlohmann/json.hpp>

namespace attnscope::engine {
namespace {

const char* layoutName(WeightsLayout layout) {
    switch (layout) {
    case WeightsLayout::None: return "none";
    case WeightsLayout::Dense: return "dense";
    case WeightsLayout::AlignedWithPattern: return "pattern";
    }
    return "?";
}

nlohmann::json countersJson(const Counters& c) {
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& s : c.stages) stages.push_back({{"stage", s.stage}, {"seconds", s.seconds}});
    return {{"seconds", c.seconds}, {"peak_bytes", c.peakBytes}, {"flops", c.flops},
            {"entries_computed", c.entriesComputed}, {"stages", stages}};
}

nlohmann::json paramsJson(const ParamValues& params) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, value] : params) {
        std::visit([&](const auto& v) { out[name] = v; }, value);
    }
    return out;
}

PlainTensor sharedToPlain(const SharedTensorF32& t) {
    return PlainTensor::fromF32(t.shape, std::vector<float>(t.values->begin(), t.values->end()));
}

}  // namespace

std::string resultSummaryJson(const RunResult& run, std::size_t variantIndex) {
    const AttentionResult& r = run.results.at(variantIndex);
    nlohmann::json j;
    j["variant"] = r.variantId;
    j["params"] = paramsJson(r.params);
    j["n"] = r.n;
    j["m"] = r.m;
    j["heads"] = r.heads;
    j["head_dim"] = r.d;
    j["seed"] = run.projection.seed;
    if (!run.modelFolder.empty()) j["model"] = {{"folder", run.modelFolder}, {"layer", run.modelLayer}};
    j["seconds"] = r.counters.seconds;
    j["peak_bytes"] = r.counters.peakBytes;
    j["flops"] = r.counters.flops;
    j["entries_computed"] = r.counters.entriesComputed;
    j["counters"] = countersJson(r.counters);
    j["weights_layout"] = layoutName(r.weightsLayout);
    j["pattern"] = {{"form", r.pattern.implicitDense ? (r.pattern.causal ? "causal" : "all") : "listed"},
                    {"per_head", r.pattern.perHead},
                    {"entries", patternEntryCount(r.pattern)}};
    j["empty_rows"] = r.emptyRowCount;
    j["warnings"] = run.warnings;
    return j.dump();
}

Result<void> writeResultFile(const std::string& path, const RunResult& run, std::size_t variantIndex,
                             const ResultFileOptions& options) {
    if (variantIndex >= run.results.size())
        return makeError(ErrorCode::InvalidArgument, "no result for variant index " + std::to_string(variantIndex));
    const AttentionResult& r = run.results[variantIndex];
    const bool denseFits = r.n <= options.denseLimit && r.m <= options.denseLimit;

    // Tensors are gathered first; the writer validates names and sizes.
    std::vector<std::pair<std::string, PlainTensor>> owned;
    owned.emplace_back("output", sharedToPlain(r.output));

    SparsePattern listed;
    const bool listPatternHere = !r.pattern.implicitDense || denseFits;
    if (listPatternHere) {
        listed = listPattern(r.pattern);
        const std::int64_t rowsListed = static_cast<std::int64_t>(listed.rowPtr.size());
        owned.emplace_back("pattern.row_ptr", PlainTensor::fromI64({rowsListed}, listed.rowPtr));
        PlainTensor cols;
        cols.dtype = DType::I32;
        cols.shape = {listed.nnz()};
        cols.i32 = listed.colIdx;
        owned.emplace_back("pattern.col_idx", std::move(cols));
        owned.emplace_back("pattern.reason", PlainTensor::fromU8({listed.nnz()}, listed.reason));
    }

    if (denseFits && r.weightsLayout != WeightsLayout::None) {
        PlainTensor dense = PlainTensor::zeros(DType::F32, {r.heads, r.n, r.m});
        if (r.weightsLayout == WeightsLayout::Dense) {
            dense.f32.assign(r.weights.values->begin(), r.weights.values->end());
        } else {
            for (int h = 0; h < r.heads; ++h)
                for (std::int64_t i = 0; i < r.n; ++i)
                    for (std::int64_t j = 0; j < r.m; ++j)
                        dense.f32[static_cast<std::size_t>((h * r.n + i) * r.m + j)] = r.weightAt(h, i, j);
        }
        owned.emplace_back("weights", std::move(dense));
    } else if (r.weightsLayout == WeightsLayout::AlignedWithPattern) {
        owned.emplace_back("pattern.weights", sharedToPlain(r.weights));
    }
    if (denseFits && listPatternHere) {
        PlainTensor mask = PlainTensor::zeros(DType::U8, {r.heads, r.n, r.m});
        for (std::int64_t h = 0; h < r.heads; ++h) {
            const std::int64_t rowBase = listed.perHead ? h * r.n : 0;
            for (std::int64_t i = 0; i < r.n; ++i)
                for (std::int64_t e = listed.rowPtr[rowBase + i]; e < listed.rowPtr[rowBase + i + 1]; ++e)
                    mask.u8[static_cast<std::size_t>((h * r.n + i) * r.m + listed.colIdx[e])] = 1;
        }
        owned.emplace_back("mask", std::move(mask));
    }
    if (!r.rowStatus.shape.empty()) owned.emplace_back("row_status", r.rowStatus);
    for (const auto& [name, tensor] : r.diagnostics) owned.emplace_back(r.variantId + "." + name, tensor);

    nlohmann::json tokens = nlohmann::json::array();
    for (const auto& t : run.input.tokens) {
        // Token text can be a partial UTF-8 sequence (byte tokenizer): store it only when valid.
        nlohmann::json tj = {{"begin", t.byteBegin}, {"end", t.byteEnd}, {"id", t.id}};
        if (findInvalidUtf8(t.text) < 0) tj["text"] = t.text;
        tokens.push_back(tj);
    }
    std::map<std::string, std::string> metadata{
        {"format", "pt"},
        {"attnscope.version", "0.1.0"},
        {"attnscope.request", run.requestJson},
        {"attnscope.result", resultSummaryJson(run, variantIndex)},
        {"attnscope.tokens", tokens.dump()},
    };
    if (!run.input.tokens.empty()) metadata["attnscope.tokenizer"] = tokenizerName(run.input.kind);

    std::vector<StWriteItem> items;
    items.reserve(owned.size());
    for (const auto& [name, tensor] : owned) items.push_back(StWriteItem{name, &tensor});
    return writeSafetensors(path, items, metadata);
}

}  // namespace attnscope::engine
