// The one assertion the fuzz targets use. Unlike assert() it stays on in release builds (the
// corpus replay runs in the normal RelWithDebInfo build), and it names the broken property, so a
// crash report says what went wrong and not only where.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: property violated: %s\n  (%s)\n", __FILE__, __LINE__,   \
                         what, #cond);                                                             \
            std::abort();                                                                          \
        }                                                                                          \
    } while (0)
