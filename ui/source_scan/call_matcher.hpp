// The call shapes of this library and of gokit/db/lock, matched over a file's tokens: which
// string literal is passed as a lock's name (see source_scanner.hpp for the list).
#pragma once

#include "source_scan/scan_types.hpp"
#include "source_scan/source_lexer.hpp"

#include <vector>

namespace lockscope::scan {

// Go files get the Go shapes, C/C++ files the C++ ones, wrappers in other languages both.
TextScan matchLockCalls(const std::vector<Token>& tokens, Language language);

}  // namespace lockscope::scan
