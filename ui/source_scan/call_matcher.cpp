#include "source_scan/call_matcher.hpp"

#include <optional>
#include <string_view>

namespace lockscope::scan {
namespace {

class Matcher {
public:
    Matcher(const std::vector<Token>& tokens, TextScan& out) : t_(tokens), out_(out) {}

    void run(Language lang) {
        // Go files get the Go shapes, C/C++ files the C++ ones, wrappers in other languages both.
        const bool go = lang != Language::cpp;
        const bool cpp = lang != Language::go;
        for (std::size_t k = 0; k < t_.size(); ++k) {
            if (go) goCalls(k);
            if (cpp) cppCalls(k);
        }
    }

private:
    bool ident(std::size_t k, std::string_view text) const {
        return k < t_.size() && t_[k].kind == Kind::ident && t_[k].text == text;
    }
    bool punct(std::size_t k, std::string_view text) const {
        return k < t_.size() && t_[k].kind == Kind::punct && t_[k].text == text;
    }
    bool member(std::size_t k) const {  // is token k reached through ., -> or :: ?
        return k > 0 && (punct(k - 1, ".") || punct(k - 1, "->") || punct(k - 1, "::"));
    }

    // From the first token of an argument, skips `count` arguments; the index of the next one, or
    // nullopt when the list closes first.
    std::optional<std::size_t> skipArgs(std::size_t k, int count) const {
        int depth = 0;
        for (; k < t_.size() && count > 0; ++k) {
            if (t_[k].kind != Kind::punct) continue;
            const std::string_view p = t_[k].text;
            if (p == "(" || p == "[" || p == "{") {
                ++depth;
            } else if (p == ")" || p == "]" || p == "}") {
                if (depth-- == 0) return std::nullopt;
            } else if (p == "," && depth == 0) {
                --count;
            }
        }
        if (count > 0 || k >= t_.size()) return std::nullopt;
        return k;
    }

    // The constant string starting at token k: a literal, more literals right after it (C++
    // concatenation) or after '+' (Go), ending the argument. nullopt when it is not constant.
    struct Constant {
        std::string value;
        std::string problem;
        int line = 0;
    };
    std::optional<Constant> constantAt(std::size_t k) const {
        if (k >= t_.size() || t_[k].kind != Kind::str) return std::nullopt;
        Constant c{t_[k].value, t_[k].problem, t_[k].line};
        for (++k; k < t_.size();) {
            const std::size_t next = punct(k, "+") ? k + 1 : k;
            if (next >= t_.size() || t_[next].kind != Kind::str) break;
            c.value += t_[next].value;
            if (c.problem.empty()) c.problem = t_[next].problem;
            k = next + 1;
        }
        if (!(punct(k, ",") || punct(k, ")") || punct(k, "}"))) return std::nullopt;
        return c;
    }

    // The name argument at k. `warn`: say so when it is not a constant (only for call shapes that
    // are surely this library; an unrelated class called Lock must not flood the warnings).
    void takeName(std::optional<std::size_t> k, bool warn) {
        if (!k) return;
        const std::optional<Constant> c = constantAt(*k);
        if (!c) {
            if (warn) out_.problems.push_back({"the lock name is not a constant string; add it by hand", t_[*k].line});
            return;
        }
        if (!c->problem.empty()) {
            out_.problems.push_back({"lock name literal skipped: " + c->problem, c->line});
        } else if (c->value.empty()) {
            out_.problems.push_back({"empty lock name (the library rejects it)", c->line});
        } else {
            out_.names.push_back({c->value, c->line});
        }
    }

    void goCalls(std::size_t k) {
        if (ident(k, "lock") && !member(k) && punct(k + 1, ".") && punct(k + 3, "(")) {
            if (ident(k + 2, "New")) takeName(skipArgs(k + 4, 1), true);
            else if (ident(k + 2, "RunOnce") || ident(k + 2, "RunBlocking")) takeName(skipArgs(k + 4, 2), true);
        } else if (ident(k, "service") && !member(k) && punct(k + 1, ".") && ident(k + 2, "WithSingletonCron") &&
                   punct(k + 3, "(")) {
            // The first string argument that is not a cron spec ("0 3 * * *", "@daily").
            for (std::optional<std::size_t> a = k + 4; a; a = skipArgs(*a, 1)) {
                const std::optional<Constant> c = constantAt(*a);
                if (c && c->problem.empty() && !c->value.empty() && c->value.front() != '@' &&
                    c->value.find_first_of(" \t") == std::string::npos) {
                    out_.names.push_back({c->value, c->line});
                    return;
                }
            }
        }
    }

    void cppCalls(std::size_t k) {
        std::size_t x = k;  // the Lock / run_once token
        bool qualified = false;
        if (ident(k, "pglock") && !member(k) && punct(k + 1, "::")) {
            x = k + 2;
            qualified = true;
        } else if (member(k)) {
            return;  // other::Lock, lk.run_once, p->run_once: not ours (pglock::X is handled at "pglock")
        }
        if (ident(x, "Lock")) {
            if (punct(x + 1, "(") || punct(x + 1, "{")) {
                takeName(skipArgs(x + 2, 1), qualified);  // pglock::Lock(pool, "name") temporary
            } else if (x + 1 < t_.size() && t_[x + 1].kind == Kind::ident &&
                       (punct(x + 2, "(") || punct(x + 2, "{"))) {
                // pglock::Lock lk(pool, "name"): never warned about, since a function returning
                // pglock::Lock has exactly this shape.
                takeName(skipArgs(x + 3, 1), false);
            } else if (punct(x + 1, ">") && punct(x + 2, "(")) {
                takeName(skipArgs(x + 3, 1), qualified);  // make_unique<pglock::Lock>(pool, "name")
            }
        } else if ((ident(x, "run_once") || ident(x, "run_blocking")) && punct(x + 1, "(")) {
            takeName(skipArgs(x + 2, 1), qualified);
        }
    }

    const std::vector<Token>& t_;
    TextScan& out_;
};

}  // namespace

TextScan matchLockCalls(const std::vector<Token>& tokens, Language language) {
    TextScan out;
    Matcher(tokens, out).run(language);
    return out;
}

}  // namespace lockscope::scan
