// Entry point of the `pglock` command-line tool.
#pragma once

namespace pglock::cli {

// Parses argv, runs one verb and returns the process exit code (see exit_codes.hpp). Never
// throws: every failure becomes a one-line `pglock: error: ...` on stderr and exit code 1.
int run(int argc, char** argv);

}  // namespace pglock::cli
