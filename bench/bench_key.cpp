// pglock_bench_key: how many names per second pglock::key_of turns into advisory keys.
//   pglock_bench_key [--names N] [--rounds R]
// Hashes N short names ("job-0" .. "job-<N-1>", made before the clock starts) R times on one
// thread, alternating with a reference: the same key computed through OpenSSL's EVP interface
// with one reused context (what key_of did before). Prints each round and the best and median
// rate of both, in millions of names per second; the ratio is what survives a busy machine.
// Exits 1 if the two ever disagree.
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pglock/key.hpp"

namespace {

struct EvpReference {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~EvpReference() {
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
    }
    std::int64_t key(std::string_view name) {
        std::array<unsigned char, EVP_MAX_MD_SIZE> sum{};
        unsigned int len = 0;
        EVP_DigestInit_ex2(ctx, md, nullptr);
        EVP_DigestUpdate(ctx, name.data(), name.size());
        EVP_DigestFinal_ex(ctx, sum.data(), &len);
        std::uint64_t bits = 0;
        for (std::size_t i = 0; i < 8; ++i) bits = (bits << 8) | sum[i];
        return static_cast<std::int64_t>(bits);
    }
};

// Million names per second for one pass; every key feeds `sink`, so no call can be dropped.
template <class F>
double rate(const std::vector<std::string>& input, F&& key, std::uint64_t& sink) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& name : input) sink ^= static_cast<std::uint64_t>(key(name));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return static_cast<double>(input.size()) / s / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
    long names = 200000;
    int rounds = 10;
    try {
        for (int i = 1; i < argc; i += 2) {
            const std::string_view arg = argv[i];
            if (i + 1 >= argc) throw std::exception();
            if (arg == "--names") names = std::stol(argv[i + 1]);
            else if (arg == "--rounds") rounds = std::stoi(argv[i + 1]);
            else throw std::exception();
        }
    } catch (const std::exception&) {
        std::fprintf(stderr, "usage: pglock_bench_key [--names N] [--rounds R]\n");
        return 2;
    }
    if (names < 1 || rounds < 1) return 2;

    std::vector<std::string> input;
    input.reserve(static_cast<std::size_t>(names));
    for (long i = 0; i < names; ++i) input.push_back("job-" + std::to_string(i));

    EvpReference evp;
    for (const std::string& name : input) {
        if (pglock::key_of(name) != evp.key(name)) {
            std::fprintf(stderr, "pglock_bench_key: key_of(\"%s\") differs from the EVP reference\n", name.c_str());
            return 1;
        }
    }

    std::uint64_t sink_key = 0, sink_evp = 0;
    std::vector<double> ours, reference;
    for (int r = 0; r < rounds; ++r) {
        ours.push_back(rate(input, [](std::string_view n) { return pglock::key_of(n); }, sink_key));
        reference.push_back(rate(input, [&](std::string_view n) { return evp.key(n); }, sink_evp));
        std::printf("round %2d: key_of %.2f, EVP reference %.2f M names/s\n", r + 1, ours.back(), reference.back());
    }
    if (sink_key != sink_evp) return 1;
    std::sort(ours.begin(), ours.end());
    std::sort(reference.begin(), reference.end());
    std::printf("key_of on %ld names like \"job-123\": best %.2f, median %.2f M names/s (goal >= 5); "
                "EVP reference best %.2f, median %.2f; ratio of medians %.2fx\n",
                names, ours.back(), ours[ours.size() / 2], reference.back(), reference[reference.size() / 2],
                ours[ours.size() / 2] / reference[reference.size() / 2]);
    return 0;
}
