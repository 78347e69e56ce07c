#pragma once
// The figure file formats, apart from the exporter so that code which only names them (recipes)
// needs no painting code.

#include <QString>

namespace attnscope::app {

enum class FigureFormat { Png, Svg, Pdf };

/// "png", "svg", "pdf": the file suffix and the name recipes and sidecars use.
inline QString figureFormatName(FigureFormat format) {
    switch (format) {
    case FigureFormat::Png: return QStringLiteral("png");
    case FigureFormat::Svg: return QStringLiteral("svg");
    case FigureFormat::Pdf: return QStringLiteral("pdf");
    }
    return {};
}

}  // namespace attnscope::app
