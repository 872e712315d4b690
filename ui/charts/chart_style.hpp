// The charts' colours from the application's palette (theme/app_palette.hpp). QChart's built-in
// themes are fixed designs that know nothing of the palette: a light chart stays white in the
// dark theme. Each chart calls this when built and again on every palette change.
#pragma once

class QChart;

namespace lockscope::charts {

// Background Base, title, legend and axis text Text, grid and axis lines mixed from both.
void applyPalette(QChart& chart);

}  // namespace lockscope::charts
