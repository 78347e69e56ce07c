// Images in the window: decoding and its refusals (common/image_file.h), File ▸ Open Image as a
// user does it against the real engine (pixels and patches), and a refused file leaving the
// input and the shown result as they were.

#include "support/qt_test_support.h"

#include "common/image_file.h"
#include "gui/settings/app_settings.h"
#include "gui/engine/engine_runner.h"
#include "gui/panels/image_input_panel.h"
#include "gui/engine/local_engine_backend.h"
#include "gui/window/main_window.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/window/view_tabs.h"

#include "views/image/image_canvas.h"
#include "views/image/image_overlay_view.h"

#include <QBuffer>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

using attnscope::app::AppSettings;
using attnscope::app::EngineRunner;
using attnscope::app::LocalEngineBackend;
using attnscope::app::MainWindow;
namespace engine = attnscope::engine;

namespace {

constexpr int kTimeoutMs = 60000;

// A 48 × 32 picture: red rising to the right, green rising downwards, blue 64.
QImage gradient() {
    QImage image(48, 32, QImage::Format_RGB888);
    for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 48; ++x) image.setPixelColor(x, y, QColor(x * 5, y * 8, 64));
    return image;
}

QString writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) return {};
    return path;
}

quint32 crc32(const QByteArray& bytes) {
    quint32 crc = 0xFFFFFFFFu;
    for (const char byte : bytes) {
        crc ^= static_cast<quint8>(byte);
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

void appendBigEndian(QByteArray& out, quint32 value) {
    for (int shift = 24; shift >= 0; shift -= 8) out.append(static_cast<char>((value >> shift) & 0xFF));
}

void appendChunk(QByteArray& png, const QByteArray& type, const QByteArray& data) {
    appendBigEndian(png, static_cast<quint32>(data.size()));
    const QByteArray chunk = type + data;
    png.append(chunk);
    appendBigEndian(png, crc32(chunk));
}

// A well-formed PNG whose header claims width × height, with a few bytes of image data: what a
// decompression bomb looks like to a reader before it decodes.
QByteArray pngClaiming(quint32 width, quint32 height) {
    QByteArray header;
    appendBigEndian(header, width);
    appendBigEndian(header, height);
    header.append(char(8)).append(char(2)).append(char(0)).append(char(0)).append(char(0));
    QByteArray png("\x89PNG\r\n\x1a\n", 8);
    appendChunk(png, "IHDR", header);
    appendChunk(png, "IDAT", QByteArray("\x78\x9c\x03\x00\x00\x00\x00\x01", 8));  // an empty zlib stream
    appendChunk(png, "IEND", {});
    return png;
}

}  // namespace

class TestImageInput : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void decodesToRgbFloatsInRasterOrder() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("gradient.png"));
        QVERIFY(gradient().save(path));
        auto image = attnscope::app::readImageFile(path);
        QVERIFY2(image.ok(), image.ok() ? "" : image.error().message.c_str());
        const engine::RgbImage rgb = attnscope::app::toRgbImage(image.value());
        QCOMPARE(rgb.width, 48);
        QCOMPARE(rgb.height, 32);
        QCOMPARE(rgb.at(0, 3, 7), 35.0f / 255.0f);  // red = 5 x
        QCOMPARE(rgb.at(1, 3, 7), 24.0f / 255.0f);  // green = 8 y
        QCOMPARE(rgb.at(2, 3, 7), 64.0f / 255.0f);
        QVERIFY(attnscope::app::looksLikeImage(path));
    }

    void refusesBrokenFilesWithTheirReason() {
        QTemporaryDir dir;
        QByteArray png;
        {
            QBuffer buffer(&png);
            buffer.open(QIODevice::WriteOnly);
            QVERIFY(gradient().save(&buffer, "PNG"));
        }
        const auto refusal = [](const QString& path) {
            auto image = attnscope::app::readImageFile(path);
            return image.ok() ? QString() : QString::fromStdString(image.error().message);
        };
        const QString truncated = writeFile(dir.filePath(QStringLiteral("truncated.png")), png.left(png.size() / 2));
        QVERIFY2(refusal(truncated).contains(QStringLiteral("cut short")), qPrintable(refusal(truncated)));
        QVERIFY(refusal(truncated).startsWith(truncated));
        const QString huge = writeFile(dir.filePath(QStringLiteral("huge.png")), pngClaiming(100000, 100000));
        QVERIFY2(refusal(huge).contains(QStringLiteral("claims 100000 × 100000 pixels")), qPrintable(refusal(huge)));
        // 26 bytes of GIF (fuzzing found it) whose screen is 2309 × 28968 pixels: LZW cannot code
        // that many from 2 bytes of data; Qt painted a 67-million-pixel background without a word.
        const QByteArray emptyGif = QByteArray::fromHex("474946383961000000000100002c05002871000900000202003b");
        QCOMPARE(emptyGif.size(), 26);
        const QString gif = writeFile(dir.filePath(QStringLiteral("empty.gif")), emptyGif);
        QVERIFY2(refusal(gif).contains(QStringLiteral("claims 2309 × 28968 pixels, but 26 bytes of GIF can code at most 283998")),
                 qPrintable(refusal(gif)));
        // A GIF whose reader reports a small frame while its screen, which Qt paints whole, is
        // 12301 × 5473: refused from the screen's size before anything is decoded.
        const QString screen = writeFile(dir.filePath(QStringLiteral("screen.gif")),
                                         QByteArray::fromHex("4749463839610d3061151db4002c2e00000000020200000000" "3b"));
        QVERIFY2(refusal(screen).contains(QStringLiteral("claims 12301 × 5473 pixels")), qPrintable(refusal(screen)));
        // A BMP header of extreme width, depth and height (fuzzing found it): the rows' size
        // overflowed a 64-bit product; compared by division it is refused as cut short.
        const QString rows = writeFile(dir.filePath(QStringLiteral("rows.bmp")),
                                       QByteArray::fromBase64("Qk1OAAAAADUAAAAAAAAAQXLLAQAAKQB1QXLLAQAYAAAAAAAAAAAA"));
        QVERIFY2(refusal(rows).contains(QStringLiteral("pixel rows need")) || refusal(rows).contains(QStringLiteral("claims")),
                 qPrintable(refusal(rows)));
        // A PNG claiming more than deflate can code from its bytes (under the size cap).
        const QString sparse = writeFile(dir.filePath(QStringLiteral("sparse.png")), pngClaiming(4000, 4000));
        QVERIFY2(refusal(sparse).contains(QStringLiteral("the picture data is missing")), qPrintable(refusal(sparse)));
        // Whole files that compress well still load: a one-colour GIF and PNG of 1000 × 1000.
        QImage flat(1000, 1000, QImage::Format_RGB32);
        flat.fill(QColor(30, 60, 90));
        for (const char* kind : {"png", "gif"}) {
            const QString path = dir.filePath(QStringLiteral("flat.%1").arg(QLatin1String(kind)));
            if (!flat.save(path, kind)) continue;  // (Qt writes no GIF)
            auto image = attnscope::app::readImageFile(path);
            QVERIFY2(image.ok(), image.ok() ? "" : image.error().message.c_str());
        }
        const QString text = writeFile(dir.filePath(QStringLiteral("notes.png")), QByteArray("these are notes, not a picture\n"));
        QVERIFY2(refusal(text).contains(QStringLiteral("not an image")), qPrintable(refusal(text)));
        QVERIFY(!attnscope::app::looksLikeImage(text));
        QVERIFY2(refusal(dir.filePath(QStringLiteral("missing.png"))).contains(QStringLiteral("no such file")),
                 qPrintable(refusal(dir.filePath(QStringLiteral("missing.png")))));
    }

    void openImageRunsItsPixelsAndPatchesAndARefusalKeepsTheInput() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("gradient.png"));
        QVERIFY(gradient().save(path));
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.initialText = QStringLiteral("some text the user typed");
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        MainWindow window(&runner, AppSettings{}, options);
        window.resize(1366, 768);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult(), kTimeoutMs);  // the text's first run

        QVERIFY2(window.openPath(path).isEmpty(), qPrintable(window.statusText()));  // judged by content
        QCOMPARE(window.currentView(), attnscope::app::ViewTab::Image);
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->input.image, kTimeoutMs);
        auto run = window.lastResult();
        QCOMPARE(run->n, 32 * 32);  // the default 32 × 32 grid
        QCOMPARE(QString::fromStdString(run->input.image->name), QStringLiteral("gradient.png"));
        attnscope::views::ImageOverlayView* view = window.views()->imageView();
        QTRY_VERIFY_WITH_TIMEOUT(view->message().isEmpty() && !view->canvas()->tiles().isEmpty(), kTimeoutMs);
        QCOMPARE(view->canvas()->picture().size(), QSize(48, 32));

        // Patches of 16 with a CLS token: 1 + 2 × 3 tokens
        attnscope::app::ImageInputPanel* panel = window.inputs()->imageInput();
        panel->modeCombo()->setCurrentIndex(1);
        panel->patchSpin()->setValue(16);
        panel->clsBox()->setChecked(true);
        QVERIFY(panel->note().contains(QStringLiteral("7 tokens")));
        window.runNow();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->n == 7, kTimeoutMs);
        QCOMPARE(window.lastResult()->input.tokens[0].text, std::string("[CLS]"));
        QTRY_COMPARE_WITH_TIMEOUT(view->query(), 0, kTimeoutMs);

        // A truncated file is refused; the picture, the input and the shown result stay.
        QByteArray png;
        {
            QBuffer buffer(&png);
            buffer.open(QIODevice::WriteOnly);
            QVERIFY(gradient().save(&buffer, "PNG"));
        }
        const QString broken = writeFile(dir.filePath(QStringLiteral("broken.png")), png.left(60));
        const auto shown = window.lastResult();
        const QString refusal = window.openImage(broken);
        QVERIFY2(refusal.contains(QStringLiteral("broken.png")), qPrintable(refusal));
        QVERIFY(window.statusText().contains(QStringLiteral("broken.png")));
        QCOMPARE(window.lastResult(), shown);
        QCOMPARE(panel->name(), QStringLiteral("gradient.png"));
        QVERIFY(window.inputs()->imageIsInput());

        // Back to the text: it was kept
        window.inputs()->useText();
        QCOMPARE(window.inputs()->text()->toPlainText(), QStringLiteral("some text the user typed"));
        window.runNow();
        QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && !window.lastResult()->input.image, kTimeoutMs);
    }

    void aSessionKeepsThePictureAndItsSettingsAndSaysSoWhenTheFileIsGone() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("gradient.png"));
        QVERIFY(gradient().save(path));
        const QString sessionPath = dir.filePath(QStringLiteral("picture.attnscope.json"));
        MainWindow::Options options;
        options.showErrorDialogs = false;
        options.initialText = QStringLiteral("the typed text");
        EngineRunner runner(std::make_unique<LocalEngineBackend>());
        {
            MainWindow window(&runner, AppSettings{}, options);
            window.show();
            QTRY_VERIFY_WITH_TIMEOUT(window.lastResult(), kTimeoutMs);
            QVERIFY(window.openImage(path).isEmpty());
            attnscope::app::ImageInputPanel* panel = window.inputs()->imageInput();
            panel->modeCombo()->setCurrentIndex(1);  // patches of 8, padded, with CLS
            panel->patchSpin()->setValue(8);
            panel->fitCombo()->setCurrentIndex(1);
            panel->clsBox()->setChecked(true);
            QVERIFY2(window.saveSessionTo(sessionPath).isEmpty(), qPrintable(window.statusText()));
        }
        {
            MainWindow window(&runner, AppSettings{}, options);
            window.show();
            QTRY_VERIFY_WITH_TIMEOUT(window.lastResult(), kTimeoutMs);
            QVERIFY2(window.openPath(sessionPath).isEmpty(), qPrintable(window.statusText()));
            QVERIFY(window.inputs()->imageIsInput());
            attnscope::app::ImageInputPanel* panel = window.inputs()->imageInput();
            QCOMPARE(panel->path(), QFileInfo(path).absoluteFilePath());
            QCOMPARE(panel->patchSpin()->value(), 8);
            QVERIFY(panel->clsBox()->isChecked());
            QCOMPARE(window.currentView(), attnscope::app::ViewTab::Image);
            // 48 × 32 in patches of 8: 6 × 4 after CLS
            QTRY_VERIFY_WITH_TIMEOUT(window.lastResult() && window.lastResult()->input.image && window.lastResult()->n == 25, kTimeoutMs);
            QCOMPARE(window.inputs()->text()->toPlainText(), QStringLiteral("the typed text"));
        }
        QVERIFY(QFile::remove(path));
        {
            MainWindow window(&runner, AppSettings{}, options);
            window.show();
            QTRY_VERIFY_WITH_TIMEOUT(window.lastResult(), kTimeoutMs);
            QVERIFY2(window.openPath(sessionPath).isEmpty(), qPrintable(window.statusText()));
            QVERIFY(!window.inputs()->imageIsInput());
            QVERIFY2(window.statusText().contains(QStringLiteral("Its picture could not be read")), qPrintable(window.statusText()));
            QVERIFY2(window.statusText().contains(QStringLiteral("gradient.png")), qPrintable(window.statusText()));
        }
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestImageInput)
#include "test_image_input.moc"
