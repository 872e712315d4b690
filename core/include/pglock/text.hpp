// Text safety shared by every front end (the CLI's logs and fields, the app's views): which code
// points must be shown escaped rather than passed to a terminal or a text view.
#pragma once

namespace pglock {

// Code points a terminal or a text view would act on or hide rather than show: C0/C1 controls,
// DEL, and the invisible format characters that reorder or hide text (bidi overrides, embeddings,
// isolates and marks, zero-width characters, line/paragraph separators, BOM). A name holding
// U+202E would otherwise display reversed. (Go's strconv.Quote escapes these too.)
bool is_hidden_code_point(char32_t cp) noexcept;

}  // namespace pglock
