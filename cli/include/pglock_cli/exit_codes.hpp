// The exit codes of `pglock`, part of its scripting interface: keep them stable.
#pragma once

namespace pglock::cli {

enum Exit : int {
    exit_ok = 0,
    exit_error = 1,      // bad input, connection or server failure, canceled by a signal while waiting
    exit_usage = 2,      // command-line usage error (from CLI11)
    exit_contended = 3,  // another session holds the lock, or --timeout passed while waiting
    exit_lost = 4,       // the session holding the lock died while `hold` held it
};

}  // namespace pglock::cli
