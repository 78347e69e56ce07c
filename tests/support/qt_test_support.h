#pragma once
// Registration for Qt Test classes, so one executable per layer runs every test class with the
// shared headless main in qt_test_main.cpp (CONVENTIONS.md §5).

#include <QObject>

#include <functional>
#include <memory>
#include <vector>

namespace attnscope::testing {

using TestFactory = std::function<std::unique_ptr<QObject>()>;

inline std::vector<TestFactory>& testRegistry() {
    static std::vector<TestFactory> registry;
    return registry;
}

template <class T>
struct RegisterTest {
    RegisterTest() {
        testRegistry().push_back([] { return std::make_unique<T>(); });
    }
};

}  // namespace attnscope::testing

#define ATTNSCOPE_REGISTER_QT_TEST(Class) static const ::attnscope::testing::RegisterTest<Class> s_register##Class;
