// The pglock command-line tool; everything lives in the pglock_cli library (cli/).
#include "pglock_cli/cli.hpp"

int main(int argc, char** argv) { return pglock::cli::run(argc, argv); }
