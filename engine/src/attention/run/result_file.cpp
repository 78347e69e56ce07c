#include <attnscope/result_file.h>
#include <attnscope/safetensors.h>
#include <attnscope/memory_budget.h>
#include <attnscope/tokenize.h>
#include <attnscope/variant_catalog.h>

#include "base/kernels/finite_scan.h"
#include "base/runtime/mapped_pages.h"
#include "base/runtime/worker_threads.h"
#include "base/api/image_grid_json.h"
#include "base/api/pattern_listing.h"
#include "attention/catalog/result_weights.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace attnscope::engine {
namespace {

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

nlohmann::json countersJson(const Counters& c) {
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& s : c.stages) stages.push_back({{"stage", s.stage}, {"seconds", s.seconds}});
    return {{"seconds", c.seconds}, {"peak_bytes", c.peakBytes}, {"flops", c.flops},
            {"entries_computed", c.entriesComputed}, {"stages", stages}};
}

nlohmann::json paramsJson(const ParamValues& params) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& entry : params) {
        const std::string& name = entry.first;  // (structured bindings cannot be captured in C++17)
        std::visit([&](const auto& v) { out[name] = v; }, entry.second);
    }
    return out;
}

// A float tensor written from where it is; one mapped from a file (a run's explicit q and k) a
// chunk at a time, each chunk's pages let go once written (base/runtime/mapped_pages.h).
StWriteItem floatsItem(const std::string& name, const SharedFloats& t) {
    if (!t.mappedFile) return StWriteItem::view(name, DType::F32, t.shape, t.data.get());
    StWriteItem item;
    item.name = name;
    item.dtype = DType::F32;
    item.shape = t.shape;
    item.produce = [&t](const std::function<bool(const void*, std::size_t)>& write) {
        return passOverMappedChunks(t, [&](std::int64_t first, std::int64_t count) {
            return write(t.data.get() + first, static_cast<std::size_t>(count) * sizeof(float));
        });
    };
    return item;
}

// Dense weights (F32) or mask (U8) [H, n, m], made head by head from the result's weights (a block
// of rows at a time), so the writer never holds more than a block.
StWriteItem denseItem(const std::string& name, const AttentionResult& r, std::shared_ptr<const AttentionWeights> weights,
                      bool mask) {
    StWriteItem item;
    item.name = name;
    item.dtype = mask ? DType::U8 : DType::F32;
    item.shape = {r.heads, r.n, r.m};
    item.produce = [weights = std::move(weights), mask, heads = r.heads, n = r.n, m = r.m](
                       const std::function<bool(const void*, std::size_t)>& write) {
        constexpr std::int64_t kRows = 64;
        std::vector<std::uint8_t> bits;
        for (int h = 0; h < heads; ++h)
            for (std::int64_t i0 = 0; i0 < n; i0 += kRows) {
                const std::int64_t i1 = std::min(n, i0 + kRows);
                const WeightTile t = weights->tile(h, i0, i1, 0, m, mask);
                if (!mask) {
                    if (!write(t.weights.data(), t.weights.size() * sizeof(float))) return false;
                    continue;
                }
                bits.resize(t.reasons.size());
                for (std::size_t c = 0; c < bits.size(); ++c) bits[c] = t.reasons[c] != 0;
                if (!write(bits.data(), bits.size())) return false;
            }
        return true;
    };
    return item;
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
    if (!run.modelFolder.empty()) {
        j["model"] = {{"folder", run.modelFolder}, {"layer", run.modelLayer}};
        if (!run.modelFamily.empty()) j["model"]["family"] = run.modelFamily;
        if (run.modelWeightFormat == "GGUF") j["model"]["weights"] = {{"format", run.modelWeightFormat}, {"types", run.modelWeightTypes}};
        // the written result is the layer's own attention, or a variant run on the layer's Q/K
        const bool own = static_cast<int>(variantIndex) == run.ownAttention;
        j["model"]["own_attention"] = own;
        if (own) j["model"]["attention"] = run.ownAttentionSummary;
    }
    j["seconds"] = r.counters.seconds;
    j["peak_bytes"] = r.counters.peakBytes;
    j["flops"] = r.counters.flops;
    j["entries_computed"] = r.counters.entriesComputed;
    j["counters"] = countersJson(r.counters);
    nlohmann::json stats = nlohmann::json::array();
    for (const auto& [name, t] : r.stats) stats.push_back(name);
    j["stats"] = stats;
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
    // The weights only for what is written from them; a result that came without them
    // (TorchFreeRunOptions::weightsOnDemand) has them made here.
    std::shared_ptr<const AttentionWeights> weights = r.weights;
    if (!weights && (denseFits || options.writePattern)) {
        auto made = makeResultWeights(r, run.q, run.k, run.keyPadding);
        if (!made) return makeError(made.error().code, path + ": not written: " + made.error().message);
        weights = std::move(made.value());
    }

    std::vector<StWriteItem> items;
    items.push_back(StWriteItem::view("output", DType::F32, r.output.shape, r.output.data()));
    if (!run.q.empty()) items.push_back(floatsItem("q", run.q));
    if (!run.k.empty()) items.push_back(floatsItem("k", run.k));
    const bool anyPadded = std::find(run.keyPadding.begin(), run.keyPadding.end(), 1) != run.keyPadding.end();
    if (anyPadded)
        items.push_back(StWriteItem::view("key_padding", DType::U8, {static_cast<std::int64_t>(run.keyPadding.size())},
                                          run.keyPadding.data()));
    if (!r.rowStatus.shape.empty()) items.push_back(StWriteItem("row_status", &r.rowStatus));
    for (const auto& [name, tensor] : r.stats) items.push_back(StWriteItem("stats." + name, &tensor));
    for (const auto& [name, tensor] : r.diagnostics) items.push_back(StWriteItem(r.variantId + "." + name, &tensor));
    if (denseFits) {
        items.push_back(denseItem("weights", r, weights, false));
        items.push_back(denseItem("mask", r, weights, true));
    }
    SparsePattern listed;
    PlainTensor rowPtr, colIdx, reason;
    if (options.writePattern) {
        auto listing = listPattern(*weights, memoryBudgetOr(options.memoryBudgetBytes));
        if (!listing) return makeError(listing.error().code, path + ": not written: " + listing.error().message);
        listed = std::move(listing.value());
        items.push_back(StWriteItem::view("pattern.row_ptr", DType::I64, {static_cast<std::int64_t>(listed.rowPtr.size())},
                                          listed.rowPtr.data()));
        items.push_back(StWriteItem::view("pattern.col_idx", DType::I32, {listed.nnz()}, listed.colIdx.data()));
        items.push_back(StWriteItem::view("pattern.reason", DType::U8, {listed.nnz()}, listed.reason.data()));
    }

    nlohmann::json tokens = nlohmann::json::array();
    for (const auto& t : run.input.tokens) {
        // Token text can be a partial UTF-8 sequence (byte tokenizer): store it only when valid.
        nlohmann::json tj = {{"begin", t.byteBegin}, {"end", t.byteEnd}, {"id", t.id}};
        if (findInvalidUtf8(t.text) < 0) tj["text"] = t.text;
        if (t.row >= 0 && run.input.image) {
            const ImageBox box = run.input.image->cellBox(t.row, t.col);
            tj.update({{"row", t.row}, {"col", t.col}, {"box", {box.x0, box.y0, box.x1, box.y1}}});
        }
        tokens.push_back(tj);
    }
    std::map<std::string, std::string> metadata{
        {"format", "pt"},
        {"attnscope.version", "0.2.0"},
        {"attnscope.request", run.requestJson},
        {"attnscope.result", resultSummaryJson(run, variantIndex)},
        {"attnscope.tokens", tokens.dump()},
    };
    if (!run.input.tokens.empty()) metadata["attnscope.tokenizer"] = tokenizerName(run.input.kind);
    if (run.input.image) metadata["attnscope.image"] = imageGridJson(*run.input.image).dump();
    return writeSafetensors(path, items, metadata);
}

namespace {

Error fileError(const std::string& path, const std::string& message) {
    return makeError(ErrorCode::InvalidInput, path + ": " + message);
}

// A typed parameter from its JSON value (the writer's std::visit): bool, integer, float, string,
// or a list (of integers unless it holds a float; an empty list is an integer list).
// Integers of the metadata. nlohmann's get<> converts a float with a plain cast, undefined when
// the value does not fit (found by fuzz_result_file): only JSON integers that fit are taken.
std::int64_t integerAt(const nlohmann::json& object, const char* key) {
    const nlohmann::json& v = object.at(key);
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())))
        throw std::invalid_argument(std::string("'") + key + "' is not an integer");
    return v.get<std::int64_t>();
}

std::int64_t integerOr(const nlohmann::json& object, const char* key, std::int64_t fallback) {
    return object.contains(key) ? integerAt(object, key) : fallback;
}

std::uint64_t unsignedOr(const nlohmann::json& object, const char* key, std::uint64_t fallback) {
    if (!object.contains(key)) return fallback;
    const nlohmann::json& v = object.at(key);
    if (!v.is_number_unsigned()) throw std::invalid_argument(std::string("'") + key + "' is not an unsigned integer");
    return v.get<std::uint64_t>();
}

Result<ParamValue> paramFromJson(const nlohmann::json& v) {
    if (v.is_boolean()) return ParamValue{v.get<bool>()};
    if (v.is_number_integer()) return ParamValue{v.get<std::int64_t>()};
    if (v.is_number_float()) return ParamValue{v.get<double>()};
    if (v.is_string()) return ParamValue{v.get<std::string>()};
    if (v.is_array()) {
        bool floats = false;
        for (const auto& e : v) {
            if (!e.is_number()) return makeError(ErrorCode::InvalidInput, "a list parameter holds a non-number");
            floats = floats || e.is_number_float();
        }
        if (floats) return ParamValue{v.get<std::vector<double>>()};
        return ParamValue{v.get<std::vector<std::int64_t>>()};
    }
    return makeError(ErrorCode::InvalidInput, "a parameter has an unsupported JSON type");
}

// Every value of t is finite; scanned a chunk at a time on the kernels' threads, a mapped file's
// pages let go behind each chunk (a million-token result's q and k are 4 GiB: 1.3 s on one thread,
// most of it mapping the pages).
bool allFiniteLettingGo(const SharedFloats& t) {
    std::atomic<bool> finite{true};
    forEachItem(mappedChunks(t), [&](std::int64_t c, int) {
        if (!finite.load(std::memory_order_relaxed)) return;
        passOverMappedChunk(t, c, [&](std::int64_t first, std::int64_t count) {
            if (!allFinite(t.data.get() + first, static_cast<std::size_t>(count))) finite = false;
            return true;
        });
    });
    return finite;
}

// Storage shared with the mapping when the bytes are float-aligned, else a copy.
SharedFloats floatsOf(const std::shared_ptr<const SafetensorsFile>& file, const StTensorInfo& info) {
    SharedFloats out;
    for (auto s : info.shape) out.shape.push_back(static_cast<std::int64_t>(s));
    const std::uint8_t* bytes = file->bytes(info);
    if (reinterpret_cast<std::uintptr_t>(bytes) % alignof(float) == 0) {
        out.data = std::shared_ptr<const float>(file, reinterpret_cast<const float*>(bytes));
        out.mappedFile = true;
    } else {
        auto copy = std::make_shared<std::vector<float>>(static_cast<std::size_t>(out.numel()));
        std::memcpy(copy->data(), bytes, copy->size() * sizeof(float));
        out.data = std::shared_ptr<const float>(copy, copy->data());
    }
    return out;
}

}  // namespace

Result<std::shared_ptr<const RunResult>> readResultFile(const std::string& path) {
    auto opened = SafetensorsFile::open(path);
    if (!opened) return opened.error();
    std::shared_ptr<const SafetensorsFile> file(std::move(opened.value()));
    const auto& meta = file->header().metadata;
    if (!meta.count("attnscope.result") || !meta.count("attnscope.request"))
        return fileError(path, "not an AttnScope result file (no attnscope.result in the metadata)");
    nlohmann::json summary, tokens, image;
    try {
        summary = nlohmann::json::parse(meta.at("attnscope.result"));
        if (meta.count("attnscope.tokens")) tokens = nlohmann::json::parse(meta.at("attnscope.tokens"));
        if (meta.count("attnscope.image")) image = nlohmann::json::parse(meta.at("attnscope.image"));
    } catch (const std::exception& e) {
        return fileError(path, std::string("the metadata is not valid JSON: ") + e.what());
    }
    auto run = std::make_shared<RunResult>();
    AttentionResult r;
    try {
        r.variantId = summary.at("variant").get<std::string>();
        r.n = integerAt(summary, "n");
        r.m = integerAt(summary, "m");
        r.heads = integerAt(summary, "heads");
        r.d = integerAt(summary, "head_dim");
        for (const auto& [name, value] : summary.at("params").items()) {
            auto p = paramFromJson(value);
            if (!p) return fileError(path, "parameter '" + name + "': " + p.error().message);
            r.params[name] = p.value();
        }
        run->projection.seed = unsignedOr(summary, "seed", 0);
        if (summary.contains("warnings")) run->warnings = summary.at("warnings").get<std::vector<std::string>>();
        // what the run cost, as it was measured (the window's status bar shows it)
        if (summary.contains("seconds")) r.counters.seconds = summary.at("seconds").get<double>();
        if (summary.contains("peak_bytes")) r.counters.peakBytes = summary.at("peak_bytes").get<std::uint64_t>();
        if (summary.contains("flops")) r.counters.flops = summary.at("flops").get<double>();
        if (summary.contains("entries_computed")) r.counters.entriesComputed = summary.at("entries_computed").get<std::int64_t>();
        r.emptyRowCount = integerOr(summary, "empty_rows", 0);
        for (const auto& t : tokens) {
            Token token;
            token.byteBegin = integerAt(t, "begin");
            token.byteEnd = integerAt(t, "end");
            token.id = integerAt(t, "id");
            token.text = t.value("text", std::string());
            token.row = static_cast<std::int32_t>(integerOr(t, "row", -1));
            token.col = static_cast<std::int32_t>(integerOr(t, "col", -1));
            run->input.tokens.push_back(std::move(token));
        }
        if (!image.is_null()) {
            auto grid = imageGridFromJson(image);
            if (!grid) return fileError(path, "attnscope.image: " + grid.error().message);
            const std::int64_t tokensCount = static_cast<std::int64_t>(run->input.tokens.size());
            if (grid->rows > kMaxImageGridCells || grid->cols > kMaxImageGridCells ||
                grid->prefix + grid->rows * grid->cols != tokensCount)
                return fileError(path, "attnscope.image: a grid of " + std::to_string(grid->rows) + " × " + std::to_string(grid->cols) +
                                           " cells after " + std::to_string(grid->prefix) + " tokens does not match the " +
                                           std::to_string(tokensCount) + " tokens");
            run->input.image = std::move(grid.value());
            run->input.kind = run->input.image->mode == ImageTokenMode::Pixels ? TokenizerKind::Pixels : TokenizerKind::Patches;
        }
    } catch (const std::exception& e) {
        return fileError(path, std::string("attnscope.result or attnscope.tokens lacks a field or has one of the wrong type: ") + e.what());
    }
    if (r.heads < 1 || r.n < 1 || r.m < 1 || r.d < 1) return fileError(path, "heads, n, m and head_dim must be positive");
    // The weights are restored by the variant's own code from its parameters: every one of them
    // must be there, of its type and in its range.
    const VariantInfo* info = findVariantInfo(r.variantId);
    if (!info) return fileError(path, "variant '" + r.variantId + "' is not one this AttnScope has");
    for (const auto& spec : info->params)
        if (!r.params.count(spec.name)) return fileError(path, "parameter '" + spec.name + "' of " + r.variantId + " is missing");
    if (auto checked = resolveParams(*info, r.params); !checked) return fileError(path, checked.error().message);
    run->requestJson = meta.at("attnscope.request");
    const std::string prefix = r.variantId + ".";
    for (const auto& info : file->header().tensors) {
        const std::string& name = info.name;
        if (name == "output" || name == "q" || name == "k") {
            if (info.dtype != StDType::F32) return fileError(path, "tensor '" + name + "' must be F32");
            continue;  // read in place below
        }
        auto load = [&](PlainTensor& into) -> Result<void> {
            auto t = file->read(name);
            if (!t) return t.error();
            into = std::move(t.value());
            return {};
        };
        Result<void> ok;
        if (name.rfind("stats.", 0) == 0) ok = load(r.stats[name.substr(6)]);
        else if (name.rfind(prefix, 0) == 0) ok = load(r.diagnostics[name.substr(prefix.size())]);
        else if (name == "row_status") ok = load(r.rowStatus);
        else if (name == "key_padding") {
            PlainTensor pad;
            ok = load(pad);
            if (ok) run->keyPadding = pad.u8;
        }
        if (!ok) return fileError(path, "tensor '" + name + "': " + ok.error().message);
    }
    const StTensorInfo* out = file->find("output");
    const StTensorInfo* q = file->find("q");
    const StTensorInfo* k = file->find("k");
    if (!out || !q || !k)
        return fileError(path, std::string("tensor '") + (!out ? "output" : !q ? "q" : "k") +
                                   "' is missing (files written before weights on demand keep no q and k)");
    run->q = floatsOf(file, *q);
    run->k = floatsOf(file, *k);
    // The tensors must agree with the summary (and so with each other) before anything reads them:
    // a file that says m = 12 over a k of 6 keys is refused here, not met as a key out of range.
    if (run->q.shape != std::vector<std::int64_t>{r.heads, r.n, r.d})
        return fileError(path, "tensor 'q' is " + shapeText(run->q.shape) + ", but the summary says [heads, n, head_dim] = " +
                                   shapeText({r.heads, r.n, r.d}));
    // (the keys the variant adds past the tokens, Star's relay, are not in k)
    const std::int64_t tokenKeys = r.m - info->extraKeys;
    if (run->k.shape != std::vector<std::int64_t>{r.heads, tokenKeys, r.d})
        return fileError(path, "tensor 'k' is " + shapeText(run->k.shape) + ", but the summary says [heads, m, head_dim] = " +
                                   shapeText({r.heads, tokenKeys, r.d}));
    SharedFloats output = floatsOf(file, *out);
    if (output.shape != std::vector<std::int64_t>{r.heads, r.n, r.d})
        return fileError(path, "tensor 'output' must be [heads, n, head_dim] as the summary says");
    r.output = SharedTensorF32{output.shape, nullptr, output.data};  // (read in place, as q and k)
    if (!r.rowStatus.shape.empty()) {
        if (r.rowStatus.dtype != DType::U8 || r.rowStatus.shape != std::vector<std::int64_t>{r.heads, r.n})
            return fileError(path, "tensor 'row_status' must be U8 [heads, n] = " + shapeText({r.heads, r.n}));
        for (std::uint8_t v : r.rowStatus.u8)
            if (v > 2) return fileError(path, "tensor 'row_status' holds " + std::to_string(v) + " (0, 1 or 2 only)");
    }
    if (!run->input.tokens.empty() && static_cast<std::int64_t>(run->input.tokens.size()) != r.n)
        return fileError(path, "attnscope.tokens lists " + std::to_string(run->input.tokens.size()) + " tokens, the summary n = " +
                                   std::to_string(r.n));
    // Every weight is recomputed from q, k and the row statistics: a NaN or an infinity there
    // would come back as garbage weights (a damaged or hand-made file). A statistic may be -inf
    // (the maximum of a row with no admissible key), never NaN or +inf.
    for (const auto& [name, values] : {std::pair<const char*, const SharedFloats*>{"q", &run->q}, {"k", &run->k}})
        if (!allFiniteLettingGo(*values)) return fileError(path, std::string("tensor '") + name + "' holds a NaN or an infinity");
    for (const auto& [name, stat] : r.stats) {
        const auto bad = std::find_if(stat.f32.begin(), stat.f32.end(),
                                      [](float v) { return v != v || v == std::numeric_limits<float>::infinity(); });
        if (bad != stat.f32.end()) return fileError(path, "tensor 'stats." + name + "' holds a NaN or +inf");
    }
    if (!run->keyPadding.empty() && static_cast<std::int64_t>(run->keyPadding.size()) != run->k.shape.at(1))
        return fileError(path, "tensor 'key_padding' must have one entry per key");
    run->n = r.n;
    run->heads = r.heads;
    run->headDim = r.d;

    try {
        if (auto attached = attachWeights(r, run->q, run->k, run->keyPadding); !attached)
            return fileError(path, attached.error().message);
    } catch (const std::exception& e) {  // (a check the restoring code lacks: refused, not a crash)
        return fileError(path, std::string("its weights cannot be restored: ") + e.what());
    }
    run->results.push_back(std::move(r));
    return std::shared_ptr<const RunResult>(std::move(run));
}

bool isResultFile(const std::string& path) {
    auto file = SafetensorsFile::open(path);
    return file.ok() && file.value()->header().metadata.count("attnscope.result") > 0;
}

}  // namespace attnscope::engine
