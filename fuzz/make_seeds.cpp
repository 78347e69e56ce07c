// Writes the seed inputs of the targets whose inputs are several files or a binary format
// (fuzz_model_folder, fuzz_qkv_file) into fuzz/corpus/, from the tests' tiny checkpoints:
//   build-fuzz/fuzz/fuzz_make_seeds fuzz/corpus samples
// (fuzz_result_file's seeds are real result files: scripts/make-fuzz-seeds.sh writes them with
// attnscope-cli.)
#include "fuzz_files.h"

#include "../tests/support/tiny_model.h"

#include <attnscope/safetensors.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using attnscope::engine::PlainTensor;
using attnscope::engine::StWriteItem;

std::string encode(const std::vector<StWriteItem>& items) {
    auto bytes = attnscope::engine::encodeSafetensors(items, {{"format", "pt"}});
    if (!bytes) throw std::runtime_error(bytes.error().message);
    return std::string(bytes->begin(), bytes->end());
}

std::string readText(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeSeed(const fs::path& folder, const std::string& name, const std::vector<std::string>& parts) {
    fs::create_directories(folder);
    std::string joined;
    for (std::size_t i = 0; i < parts.size(); ++i) joined += (i ? kFilePartSeparator : "") + parts[i];
    std::ofstream(folder / name, std::ios::binary) << joined;
    std::printf("%s/%s: %zu bytes\n", folder.string().c_str(), name.c_str(), joined.size());
}

std::vector<StWriteItem> itemsOf(const attnscope::testing::TinyModel& model, const std::string& prefix) {
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : model.tensors) items.emplace_back(prefix + name, &t);
    return items;
}

std::string wordPieceVocab() {
    std::string text;
    for (const char* t : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "##s", "."})
        text += std::string(t) + "\n";
    return text;
}

void modelFolderSeeds(const fs::path& corpus, const fs::path& samples) {
    const fs::path out = corpus / "fuzz_model_folder";
    attnscope::testing::TinyModelSpec bert;
    bert.vocab = 12, bert.hidden = 8, bert.layers = 1, bert.heads = 2, bert.inter = 16, bert.positions = 12;
    const auto bertModel = attnscope::testing::makeTinyModel(bert);
    writeSeed(out, "bert-single-file", {bertModel.configJson(), encode(itemsOf(bertModel, "bert.")), "", "", wordPieceVocab()});

    // GPT-2 in two shards with their index, and the copy sample's byte-level BPE files.
    attnscope::testing::TinyModelSpec gpt2 = bert;
    gpt2.arch = "gpt2", gpt2.vocab = 261;
    const auto gpt2Model = attnscope::testing::makeTinyModel(gpt2);
    auto items = itemsOf(gpt2Model, "");
    const std::size_t half = items.size() / 2;
    const std::vector<StWriteItem> first(items.begin(), items.begin() + half), second(items.begin() + half, items.end());
    std::string index = "{\"metadata\": {}, \"weight_map\": {";
    for (std::size_t i = 0; i < items.size(); ++i)
        index += (i ? ", \"" : "\"") + items[i].name + "\": \"model-0000" + (i < half ? "1" : "2") + "-of-00002.safetensors\"";
    index += "}}";
    writeSeed(out, "gpt2-sharded", {gpt2Model.configJson(), index, encode(first), encode(second),
                                    readText(samples / "copy-model" / "vocab.json"), readText(samples / "copy-model" / "merges.txt")});
}

void qkvSeeds(const fs::path& corpus) {
    const fs::path out = corpus / "fuzz_qkv_file";
    std::vector<float> values(2 * 5 * 4);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    const PlainTensor q = PlainTensor::fromF32({2, 5, 4}, values), k = q, v = q;
    const PlainTensor padding = PlainTensor::fromU8({5}, {0, 0, 0, 1, 1});
    writeSeed(out, "qkv", {encode({{"q", &q}, {"k", &k}, {"v", &v}})});
    writeSeed(out, "qkv-padded", {encode({{"q", &q}, {"k", &k}, {"v", &v}, {"key_padding", &padding}})});
    // Transformer-XL's own tensors: u, v [H, d] and the relative keys [H, n + M, d]
    const PlainTensor bias = PlainTensor::fromF32({2, 4}, std::vector<float>(8, 0.05f));
    const PlainTensor posKeys = PlainTensor::fromF32({2, 10, 4}, std::vector<float>(80, 0.02f));
    writeSeed(out, "qkv-transformer-xl",
              {encode({{"q", &q}, {"k", &k}, {"v", &v}, {"r_w_bias", &bias}, {"r_r_bias", &bias}, {"pos_keys", &posKeys}})});
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: fuzz_make_seeds CORPUS_DIR SAMPLES_DIR\n");
        return 2;
    }
    modelFolderSeeds(argv[1], argv[2]);
    qkvSeeds(argv[1]);
    return 0;
}
