// A main for the normal (gcc) build: feeds every file of the directories on the command line to
// LLVMFuzzerTestOneInput, in name order, so ctest replays the seed corpus and every crash
// reproducer without clang or libFuzzer. A missing directory is skipped (fuzz/regressions/<target>
// exists only once a crash has been found); a run that reads no file at all fails, since that
// can only be a wrong path.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    std::size_t replayed = 0;
    for (int a = 1; a < argc; ++a) {
        const fs::path dir(argv[a]);
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) {
            std::printf("%s: no such directory, skipped\n", argv[a]);
            continue;
        }
        std::vector<fs::path> files;
        for (const fs::directory_entry& e : fs::directory_iterator(dir))
            if (e.is_regular_file()) files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const fs::path& file : files) {
            std::ifstream in(file, std::ios::binary);
            if (!in) {
                std::fprintf(stderr, "%s: cannot be read\n", file.c_str());
                return 1;
            }
            const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            // Unlike libFuzzer, hand over a buffer of exactly the file's size, so that ASan builds
            // catch a read one past the end.
            std::vector<std::uint8_t> exact(bytes.begin(), bytes.end());
            std::fprintf(stderr, "replay %s (%zu bytes)\n", file.c_str(), exact.size());
            LLVMFuzzerTestOneInput(exact.data(), exact.size());
            ++replayed;
        }
        std::printf("%s: %zu files replayed\n", argv[a], files.size());
    }
    if (replayed == 0) {
        std::fprintf(stderr, "no corpus file found: check the directories given\n");
        return 1;
    }
    return 0;
}
