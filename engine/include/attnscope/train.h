#pragma once
// The built-in trainer: a small bidirectional Transformer (RoBERTa layout, byte vocabulary)
// trained on the CPU with the chosen attention variant, written as a model folder that
// `--model` and the GUI open like any checkpoint (docs/TRAINER.md).

#include <attnscope/variant_info.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

struct TrainOptions {
    /// roberta: the bidirectional encoder; switch: the same encoder with Switch FFN layers (every
    /// FFN `experts` experts behind a top-1 router, Fedus et al. 2021); transfo-xl: a byte-level
    /// Transformer-XL language model (task text only) with segment memory, written in Hugging
    /// Face's TransfoXL layout; star-transformer: fastNLP's encoder (task first; layers = cycles T).
    std::string arch = "roberta";
    std::int64_t experts = 8;       ///< switch: experts per FFN layer
    double capacityFactor = 1.25;   ///< switch: slots = ceil(tokens / experts · factor); 0: no capacity
    double auxLossCoef = 0.01;      ///< switch: weight of the load-balancing loss (the paper's α)
    double zLossCoef = 0.0;         ///< switch: weight of the router z-loss (0: off)
    std::int64_t segment = 32;      ///< transfo-xl: tgt_len L
    std::int64_t memory = -1;       ///< transfo-xl: mem_len M (-1: equal to segment)
    std::string task = "copy";      ///< copy | reverse | duplicate | text | first (star-transformer)
    std::string text;               ///< training text for task "text"
    std::string variant = "full";   ///< attention of every layer, during training and after
    ParamValues params;
    int layers = 2, heads = 4, dim = 64;
    std::int64_t steps = 1000;
    std::int64_t batch = 32;
    std::int64_t length = 0;        ///< symbols per example; 0 = 8 (tasks) or 48 bytes (text)
    double learningRate = 3e-3;
    std::uint64_t seed = 0;         ///< data, initial weights and the variant's random draws
    std::string out;                ///< model folder to write (created; existing files replaced)
    /// star-transformer: keep the relay (false: the ablation without it, for comparison).
    bool starRelay = true;
};

struct TrainLogEntry {
    std::int64_t step = 0;
    double loss = 0;      ///< mean cross-entropy on the predicted positions (nats)
    double accuracy = 0;  ///< share of predicted positions right, on a held-out batch
};

struct TrainReport {
    std::vector<TrainLogEntry> log;
    double chanceAccuracy = 0;
    std::int64_t parameters = 0;
    std::int64_t sequenceLength = 0;
    double seconds = 0;
    std::string folder;
    /// One held-out example and the trained model's last hidden states on it [n, dim]: opening
    /// the folder and running these ids must give the same states (the reload check).
    std::vector<std::int64_t> probeIds;
    std::vector<float> probeHidden;
};

/// Variant ids the trainer accepts (a differentiable path exists for each).
std::vector<std::string> trainableVariants();

}  // namespace attnscope::engine
