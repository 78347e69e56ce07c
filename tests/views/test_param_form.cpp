#include "support/qt_test_support.h"

#include "views/widgets/param_form.h"

#include <attnscope/variant_catalog.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

using attnscope::views::ParamForm;
namespace engine = attnscope::engine;

namespace {

engine::ParamSpec spec(const std::string& name, engine::ParamType type, engine::ParamValue value, double lo = 0,
                       double hi = 0) {
    engine::ParamSpec s;
    s.name = name;
    s.type = type;
    s.defaultValue = std::move(value);
    s.minValue = lo;
    s.maxValue = hi;
    s.help = "help for <" + name + ">";
    return s;
}

engine::VariantInfo schema() {
    engine::VariantInfo info;
    info.id = "demo";
    info.params.push_back(spec("causal", engine::ParamType::Bool, false, 0, 1));
    info.params.push_back(spec("window", engine::ParamType::Int, std::int64_t{64}, 1, 4096));
    info.params.push_back(spec("temperature", engine::ParamType::Float, 0.5, 0.01, 10.0));
    auto mode = spec("mode", engine::ParamType::Choice, std::string("union"));
    mode.choices = {"union", "intersection"};
    info.params.push_back(mode);
    info.params.push_back(spec("globals", engine::ParamType::IntList, std::vector<std::int64_t>{0, 5}, 0, 1e6));
    info.params.push_back(spec("scales", engine::ParamType::FloatList, std::vector<double>{0.5, 2.0}, 0, 100));
    return info;
}

}  // namespace

class TestParamForm : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rangesInTooltipsAreWrittenAsPeopleWriteThem() {
        engine::VariantInfo info;
        info.id = "ranged";
        info.params.push_back(spec("tokens", engine::ParamType::Int, std::int64_t{8}, 1, 1 << 20));
        ParamForm form;
        form.setVariant(info);
        auto* tokens = form.findChild<QSpinBox*>(QStringLiteral("tokens"));
        QVERIFY(tokens);
        QVERIFY2(tokens->toolTip().contains(QStringLiteral("range 1 – 1048576")), qPrintable(tokens->toolTip()));
    }

    void buildsEditorsFromTheSchema() {
        ParamForm form;
        form.setVariant(schema());
        auto* causal = form.findChild<QCheckBox*>(QStringLiteral("causal"));
        auto* window = form.findChild<QSpinBox*>(QStringLiteral("window"));
        auto* temperature = form.findChild<QDoubleSpinBox*>(QStringLiteral("temperature"));
        auto* mode = form.findChild<QComboBox*>(QStringLiteral("mode"));
        auto* globals = form.findChild<QLineEdit*>(QStringLiteral("globals"));
        auto* scales = form.findChild<QLineEdit*>(QStringLiteral("scales"));
        QVERIFY(causal && window && temperature && mode && globals && scales);
        QVERIFY(!causal->isChecked());
        QCOMPARE(window->minimum(), 1);
        QCOMPARE(window->maximum(), 4096);
        QCOMPARE(window->value(), 64);
        QCOMPARE(temperature->minimum(), 0.01);
        QCOMPARE(temperature->maximum(), 10.0);
        QCOMPARE(temperature->value(), 0.5);
        QCOMPARE(mode->count(), 2);
        QCOMPARE(mode->currentText(), QStringLiteral("union"));
        QCOMPARE(globals->text(), QStringLiteral("0, 5"));
        QVERIFY(causal->toolTip().contains(QStringLiteral("help for &lt;causal&gt;")));  // escaped

        const engine::ParamValues defaults = form.values();
        QCOMPARE(defaults.size(), std::size_t{6});
        QCOMPARE(std::get<bool>(defaults.at("causal")), false);
        QCOMPARE(std::get<std::int64_t>(defaults.at("window")), std::int64_t{64});
        QCOMPARE(std::get<std::string>(defaults.at("mode")), std::string("union"));
        QCOMPARE(std::get<std::vector<std::int64_t>>(defaults.at("globals")), (std::vector<std::int64_t>{0, 5}));
    }

    void returnsTypedValuesAfterEdits() {
        ParamForm form;
        form.setVariant(schema());
        QSignalSpy changed(&form, &ParamForm::valuesChanged);
        form.findChild<QCheckBox*>(QStringLiteral("causal"))->setChecked(true);
        form.findChild<QSpinBox*>(QStringLiteral("window"))->setValue(128);
        form.findChild<QDoubleSpinBox*>(QStringLiteral("temperature"))->setValue(2.25);
        form.findChild<QComboBox*>(QStringLiteral("mode"))->setCurrentIndex(1);
        form.findChild<QLineEdit*>(QStringLiteral("globals"))->setText(QStringLiteral(" 1,2 , 30"));
        form.findChild<QLineEdit*>(QStringLiteral("scales"))->setText(QStringLiteral("0.25"));
        QVERIFY(changed.count() >= 6);

        const engine::ParamValues v = form.values();
        QCOMPARE(std::get<bool>(v.at("causal")), true);
        QCOMPARE(std::get<std::int64_t>(v.at("window")), std::int64_t{128});
        QCOMPARE(std::get<double>(v.at("temperature")), 2.25);
        QCOMPARE(std::get<std::string>(v.at("mode")), std::string("intersection"));
        QCOMPARE(std::get<std::vector<std::int64_t>>(v.at("globals")), (std::vector<std::int64_t>{1, 2, 30}));
        QCOMPARE(std::get<std::vector<double>>(v.at("scales")), (std::vector<double>{0.25}));
        QVERIFY(form.invalidParams().isEmpty());

        form.findChild<QLineEdit*>(QStringLiteral("globals"))->setText(QStringLiteral("1, x"));
        QCOMPARE(form.invalidParams(), QStringList{QStringLiteral("globals")});

        engine::ParamValues set;
        set["window"] = std::int64_t{7};
        set["mode"] = std::string("union");
        form.setValues(set);
        QCOMPARE(std::get<std::int64_t>(form.values().at("window")), std::int64_t{7});
        QCOMPARE(std::get<std::string>(form.values().at("mode")), std::string("union"));
    }

    void aFollowingDefaultTracksItsSourceUntilEdited() {
        // Transformer-XL's memory equals segment until the user sets memory.
        engine::VariantInfo info;
        info.id = "follow_demo";
        info.params.push_back(spec("segment", engine::ParamType::Int, std::int64_t{64}, 1, 4096));
        auto memory = spec("memory", engine::ParamType::Int, std::int64_t{64}, 0, 4096);
        memory.defaultFrom = "segment";
        info.params.push_back(memory);
        ParamForm form;
        form.setVariant(info);
        auto* segment = form.findChild<QSpinBox*>(QStringLiteral("segment"));
        auto* mem = form.findChild<QSpinBox*>(QStringLiteral("memory"));
        QVERIFY(segment && mem);
        segment->setValue(32);
        QCOMPARE(mem->value(), 32);
        QVERIFY(mem->toolTip().contains(QStringLiteral("Follows segment")));
        mem->setValue(10);
        segment->setValue(16);
        QCOMPARE(mem->value(), 10);
        QCOMPARE(std::get<std::int64_t>(form.values().at("memory")), std::int64_t{10});
    }

    void aParameterOfAnotherFormIsDisabledUntilThatFormIsChosen() {
        // BigBird's extra_global is read only with form = etc (the registry's own schema).
        const engine::VariantInfo* bigbird = engine::findVariantInfo("bigbird");
        QVERIFY(bigbird);
        ParamForm form;
        form.setVariant(*bigbird);
        auto* formChoice = form.findChild<QComboBox*>(QStringLiteral("form"));
        auto* extra = form.findChild<QSpinBox*>(QStringLiteral("extra_global"));
        QVERIFY(formChoice && extra);
        QCOMPARE(formChoice->currentText(), QStringLiteral("itc"));
        QVERIFY(!extra->isEnabled());
        QVERIFY(extra->toolTip().contains(QStringLiteral("Used only when form = etc")));
        formChoice->setCurrentText(QStringLiteral("etc"));
        QVERIFY(extra->isEnabled());
        formChoice->setCurrentText(QStringLiteral("itc"));
        QVERIFY(!extra->isEnabled());
        // Its value is still part of the request (the engine ignores it under itc).
        QVERIFY(form.values().count("extra_global") == 1);
    }

    void smallFloatDefaultsSurviveTheSpinBox() {
        // A spin box rounds to its decimals: 1e-4 and 1e-6 (Performer's feature_eps, Linear's
        // eps) must come back as set, not as 0.
        engine::VariantInfo info;
        info.id = "eps_demo";
        info.params.push_back(spec("feature_eps", engine::ParamType::Float, 1e-4, 0.0, 1.0));
        info.params.push_back(spec("eps", engine::ParamType::Float, 1e-6, 0.0, 1.0));
        info.params.push_back(spec("alpha", engine::ParamType::Float, 1.5, 1.0, 4.0));
        ParamForm form;
        form.setVariant(info);
        const auto values = form.values();
        QCOMPARE(std::get<double>(values.at("feature_eps")), 1e-4);
        QCOMPARE(std::get<double>(values.at("eps")), 1e-6);
        QCOMPARE(std::get<double>(values.at("alpha")), 1.5);
    }

    void rebuildsForAnotherVariant() {
        ParamForm form;
        form.setVariant(schema());
        engine::VariantInfo other;
        other.id = "plain";
        other.params.push_back(spec("causal", engine::ParamType::Bool, true, 0, 1));
        form.setVariant(other);
        QCOMPARE(form.values().size(), std::size_t{1});
        QCOMPARE(std::get<bool>(form.values().at("causal")), true);
        QVERIFY(!form.findChild<QSpinBox*>(QStringLiteral("window")));
        form.setVariant(engine::VariantInfo{});
        QVERIFY(form.values().empty());
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestParamForm)
#include "test_param_form.moc"
