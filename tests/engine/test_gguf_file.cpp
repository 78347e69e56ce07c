// GGUF files written byte by byte here: a valid one read back (metadata of every kind, the tensor
// table, the data section's alignment and each tensor's bytes from its type's block layout), and
// every rule of the reader broken once, each refusal naming it.

#include "io/checkpoint/gguf_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace attnscope::engine;

namespace {

// A GGUF image built field by field (little-endian, as the format).
struct Builder {
    std::vector<std::uint8_t> bytes;
    template <class T>
    Builder& put(T v) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
        bytes.insert(bytes.end(), p, p + sizeof(T));
        return *this;
    }
    Builder& str(const std::string& s) {
        put<std::uint64_t>(s.size());
        bytes.insert(bytes.end(), s.begin(), s.end());
        return *this;
    }
    Builder& header(std::uint32_t version, std::uint64_t tensors, std::uint64_t pairs) {
        return put<std::uint32_t>(0x46554747).put(version).put(tensors).put(pairs);
    }
    Builder& kvString(const std::string& key, const std::string& value) { return str(key).put<std::uint32_t>(8).str(value); }
    Builder& kvU32(const std::string& key, std::uint32_t value) { return str(key).put<std::uint32_t>(4).put(value); }
    Builder& tensor(const std::string& name, std::vector<std::uint64_t> dims, std::uint32_t type, std::uint64_t offset) {
        str(name).put<std::uint32_t>(static_cast<std::uint32_t>(dims.size()));
        for (auto d : dims) put(d);
        return put(type).put(offset);
    }
    Builder& alignTo(std::size_t alignment) {
        while (bytes.size() % alignment != 0) bytes.push_back(0);
        return *this;
    }
    Builder& data(std::size_t count, std::uint8_t first = 0) {
        for (std::size_t i = 0; i < count; ++i) bytes.push_back(static_cast<std::uint8_t>(first + i));
        return *this;
    }
};

// Metadata of every kind, then two tensors: F32 [4, 3] (48 bytes at 0) and Q8_0 [32, 2] (2 blocks
// of 34 bytes at 64, the next multiple of the alignment 32).
Builder validFile() {
    Builder b;
    b.header(3, 2, 5).kvString("general.architecture", "llama").kvU32("llama.block_count", 2).kvU32("general.alignment", 32);
    b.str("tokenizer.ggml.tokens").put<std::uint32_t>(9).put<std::uint32_t>(8).put<std::uint64_t>(2).str("<s>").str("a");
    b.str("llama.rope.freq_base").put<std::uint32_t>(6).put<float>(10000.0f);
    b.tensor("token_embd.weight", {4, 3}, 0, 0).tensor("blk.0.attn_q.weight", {32, 2}, 8, 64);
    b.alignTo(32).data(48, 1).data(16).data(68, 7);
    return b;
}

std::string refusal(const Builder& b) {
    auto parsed = parseGgufHeader(b.bytes.data(), b.bytes.size(), "m.gguf");
    return parsed.ok() ? std::string() : parsed.error().message;
}

}  // namespace

TEST(GgufFile, ReadsMetadataTensorsAndTheirBytes) {
    const Builder b = validFile();
    const std::string path = (std::filesystem::temp_directory_path() / ("attnscope-gguf-" + std::to_string(::getpid()) + ".gguf")).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.bytes.data()), static_cast<std::streamsize>(b.bytes.size()));
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.ok()) << file.error().message;
    const GgufHeader& h = file.value()->header();
    EXPECT_EQ(h.version, 3u);
    EXPECT_EQ(std::get<std::string>(h.metadata.at("general.architecture").value), "llama");
    EXPECT_EQ(std::get<std::uint64_t>(h.metadata.at("llama.block_count").value), 2u);
    EXPECT_EQ(std::get<double>(h.metadata.at("llama.rope.freq_base").value), 10000.0);
    const auto& tokens = std::get<GgufValue::Array>(h.metadata.at("tokenizer.ggml.tokens").value);
    ASSERT_EQ(tokens.size(), 2u);
    EXPECT_EQ(std::get<std::string>(tokens[1]), "a");
    EXPECT_EQ(h.dataStart % 32, 0u);
    ASSERT_EQ(h.tensors.size(), 2u);
    const GgufTensor* q = file.value()->find("blk.0.attn_q.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->bytes, 68u);  // 64 elements = 2 Q8_0 blocks of 34 bytes
    EXPECT_EQ(q->elements(), 64);
    EXPECT_EQ(ggmlTypeName(q->type), "Q8_0");
    EXPECT_EQ(file.value()->bytes(*q)[0], 7);
    EXPECT_EQ(file.value()->bytes(*file.value()->find("token_embd.weight"))[47], 48);
    std::filesystem::remove(path);
}

TEST(GgufFile, EveryRuleBrokenIsRefusedByName) {
    auto has = [](const std::string& message, const std::string& part) {
        return message.find(part) != std::string::npos;
    };
    Builder bad;
    bad.put<std::uint32_t>(0x12345678);
    EXPECT_TRUE(has(refusal(bad), "not a GGUF file"));
    EXPECT_TRUE(has(refusal(Builder().header(1, 0, 0)), "version 1 is not read (versions 2 and 3 are)"));
    EXPECT_TRUE(has(refusal(Builder().header(3, 0, 1u << 30)), "more than the file holds"));
    EXPECT_TRUE(has(refusal(Builder().header(3, 0, 2).kvU32("a", 1).kvU32("a", 2)), "metadata key 'a' appears twice"));
    EXPECT_TRUE(has(refusal(Builder().header(3, 0, 1).str("k").put<std::uint32_t>(13).put<std::uint32_t>(0)), "value type 13"));
    EXPECT_TRUE(has(refusal(Builder().header(3, 0, 1).str("k").put<std::uint32_t>(7).put<std::uint8_t>(2)), "bool of value 2"));
    EXPECT_TRUE(has(refusal(Builder().header(3, 0, 1).str("k").put<std::uint32_t>(9).put<std::uint32_t>(9).put<std::uint64_t>(1)),
                    "array of arrays"));
    EXPECT_TRUE(has(refusal(Builder().header(3, 0, 1).str("k").put<std::uint32_t>(9).put<std::uint32_t>(4).put<std::uint64_t>(1ull << 40)),
                    "claims 1099511627776 elements"));
    EXPECT_TRUE(has(refusal(Builder().header(3, 0, 1).put<std::uint64_t>(1ull << 40).data(64)), "claims 1099511627776 bytes"));
    EXPECT_TRUE(has(refusal(Builder().header(3, 0, 1).kvU32("general.alignment", 24)), "general.alignment must be a power of two"));
    auto oneTensor = [](const std::string& name, std::vector<std::uint64_t> dims, std::uint32_t type, std::uint64_t offset, std::size_t data) {
        Builder b;
        b.header(3, 1, 0).tensor(name, std::move(dims), type, offset).alignTo(32).data(data);
        return b;
    };
    EXPECT_TRUE(has(refusal(oneTensor("t", {4}, 4, 0, 64)), "tensor 't' has type 4, which ggml does not define"));
    EXPECT_TRUE(has(refusal(oneTensor("t", {31}, 8, 0, 64)), "of type Q8_0 has rows of 31 elements, not a multiple of its block of 32"));
    EXPECT_TRUE(has(refusal(oneTensor("t", {4, 0}, 0, 0, 64)), "has dimension 1 of 0"));
    EXPECT_TRUE(has(refusal(oneTensor("t", {1, 1, 1, 1, 1}, 0, 0, 64)), "has 5 dimensions (1 to 4)"));
    EXPECT_TRUE(has(refusal(oneTensor("t", {4}, 0, 8, 64)), "data offset 8, not a multiple of the alignment 32"));
    EXPECT_TRUE(has(refusal(oneTensor("t", {64}, 0, 0, 64)), "runs past the end of the file"));
    Builder twice;
    twice.header(3, 2, 0).tensor("t", {4}, 0, 0).tensor("t", {4}, 0, 32).alignTo(32).data(64);
    EXPECT_TRUE(has(refusal(twice), "tensor 't' appears twice"));
    Builder overlap;
    overlap.header(3, 2, 0).tensor("a", {16}, 0, 0).tensor("b", {4}, 0, 32).alignTo(32).data(96);
    EXPECT_TRUE(has(refusal(overlap), "tensors 'a' and 'b' overlap"));
    EXPECT_TRUE(refusal(validFile()).empty());
    // every prefix of a valid file is refused, never read past its end
    const Builder whole = validFile();
    for (std::size_t cut = 0; cut < whole.bytes.size(); cut += 7) {
        auto parsed = parseGgufHeader(whole.bytes.data(), cut, "m.gguf");
        EXPECT_FALSE(parsed.ok()) << cut;
    }
}
