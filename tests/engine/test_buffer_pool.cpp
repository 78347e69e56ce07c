// BufferPool's recycled vectors (base/runtime/buffer_pool.h): a released vector's storage goes to the
// smallest request it can hold, small requests never take pooled storage (so that a later,
// larger request of the same run still finds it), and zeros() gives zero-filled tensors on
// recycled storage.

#include "base/runtime/buffer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace attnscope::engine;

std::vector<std::int64_t> filled(std::size_t count, std::int64_t value) { return std::vector<std::int64_t>(count, value); }

TEST(BufferPool, SmallRequestsLeavePooledStorageToLargeOnes) {
    BufferPool pool;
    std::vector<std::int64_t> big = filled(100000, 7);  // 800 KB
    const std::int64_t* bigData = big.data();
    pool.give(std::move(big));
    // 10 values (80 bytes): a vector of its own, not the pooled 800 KB
    const std::vector<std::int64_t> small = pool.take<std::int64_t>(10);
    EXPECT_GE(small.capacity(), 10u);
    EXPECT_NE(small.data(), bigData);
    // the large request of the same run still gets the released storage
    const std::vector<std::int64_t> large = pool.take<std::int64_t>(90000);
    EXPECT_EQ(large.data(), bigData);
    EXPECT_TRUE(large.empty());
}

TEST(BufferPool, TakesTheSmallestPooledVectorThatFits) {
    BufferPool pool;
    std::vector<std::int64_t> a = filled(20000, 1), b = filled(200000, 2);
    const std::int64_t *aData = a.data(), *bData = b.data();
    pool.give(std::move(b));
    pool.give(std::move(a));
    EXPECT_EQ(pool.take<std::int64_t>(15000).data(), aData);
    EXPECT_EQ(pool.take<std::int64_t>(15000).data(), bData);  // the only one left
}

TEST(BufferPool, ZerosAreZeroOnRecycledStorage) {
    BufferPool pool;
    std::vector<std::int64_t> stale = filled(50000, -3);
    const std::int64_t* staleData = stale.data();
    pool.give(std::move(stale));
    const PlainTensor t = pool.zeros(DType::I64, {4, 1000, 10});
    ASSERT_EQ(t.i64.size(), 40000u);
    EXPECT_EQ(t.i64.data(), staleData);
    EXPECT_TRUE(std::all_of(t.i64.begin(), t.i64.end(), [](std::int64_t x) { return x == 0; }));
    EXPECT_EQ(t.dtype, DType::I64);
    EXPECT_EQ(t.shape, (std::vector<std::int64_t>{4, 1000, 10}));

    const PlainTensor u = pool.zeros(DType::U8, {3, 5});  // small: no pooled storage needed
    EXPECT_EQ(u.u8, std::vector<std::uint8_t>(15, 0));
    const PlainTensor f = pool.zeros(DType::F32, {2, 3});
    EXPECT_EQ(f.f32, std::vector<float>(6, 0.0f));
}

}  // namespace

// A variant's workers ask for their own scratch slots at the same time (Reformer's per-worker
// heads did, and the sanitizer build crashed inside the pool's map): every worker gets its own
// block, each block keeps what its worker wrote, and the pool counts all of them.
TEST(BufferPool, WorkersTakingTheirOwnSlotsAtOnceEachGetTheirOwnScratch) {
    BufferPool pool;
    constexpr int kWorkers = 8, kSlotsPerWorker = 200, kFloats = 16;
    std::vector<std::vector<float*>> blocks(kWorkers);
    std::vector<std::thread> threads;
    for (int w = 0; w < kWorkers; ++w)
        threads.emplace_back([&, w] {
            for (int i = 0; i < kSlotsPerWorker; ++i) {
                float* p = pool.scratch("w" + std::to_string(w) + "." + std::to_string(i), kFloats);
                std::fill(p, p + kFloats, static_cast<float>(w * kSlotsPerWorker + i));
                blocks[static_cast<std::size_t>(w)].push_back(p);
                pool.give(std::vector<std::int64_t>(10000, w));
                (void)pool.take<std::int64_t>(10000);
            }
        });
    for (auto& t : threads) t.join();
    for (int w = 0; w < kWorkers; ++w)
        for (int i = 0; i < kSlotsPerWorker; ++i) {
            const float* p = blocks[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)];
            EXPECT_EQ(p, pool.scratch("w" + std::to_string(w) + "." + std::to_string(i), kFloats));
            EXPECT_EQ(p[kFloats - 1], static_cast<float>(w * kSlotsPerWorker + i));
        }
    EXPECT_GE(pool.heldBytes(), static_cast<std::uint64_t>(kWorkers * kSlotsPerWorker * kFloats) * sizeof(float));
}
