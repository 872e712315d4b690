// png_facts FILE [#RRGGBB...]: what a screenshot test needs to know of a PNG, on one line:
//   size=WxH colours=N lightness=L [#rrggbb=COUNT ...]
// colours counts distinct RGB values (a blank or one-colour image has one or two), lightness is
// the mean HSL lightness 0..255 (a dark theme is dark), and each colour given is counted exactly
// (chart bars are drawn without antialiasing, so an empty chart has none of its bars' colour).
#include <QColor>
#include <QCoreApplication>
#include <QImage>
#include <QSet>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments();
    if (args.size() < 2) {
        std::fprintf(stderr, "usage: png_facts FILE [#RRGGBB...]\n");
        return 2;
    }
    const QImage image = QImage(args.at(1)).convertToFormat(QImage::Format_RGB32);
    if (image.isNull()) {
        std::fprintf(stderr, "png_facts: cannot read %s\n", qPrintable(args.at(1)));
        return 1;
    }
    std::vector<QRgb> wanted;
    for (qsizetype i = 2; i < args.size(); ++i) wanted.push_back(QColor(args.at(i)).rgb());
    std::vector<long long> counts(wanted.size(), 0);
    QSet<QRgb> distinct;
    double lightness = 0;
    for (int y = 0; y < image.height(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
        for (int x = 0; x < image.width(); ++x) {
            const QRgb px = line[x] | 0xff000000u;
            distinct.insert(px);
            lightness += QColor(px).lightness();
            for (std::size_t i = 0; i < wanted.size(); ++i)
                if (px == wanted[i]) ++counts[i];
        }
    }
    std::printf("size=%dx%d colours=%lld lightness=%.0f", image.width(), image.height(), static_cast<long long>(distinct.size()),
                lightness / (static_cast<double>(image.width()) * image.height()));
    for (std::size_t i = 0; i < wanted.size(); ++i)
        std::printf(" %s=%lld", qPrintable(QColor(wanted[i]).name()), counts[i]);
    std::printf("\n");
    return 0;
}
