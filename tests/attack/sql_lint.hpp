// Reads a statement the way PostgreSQL's parser resolves names, and reports every name that the
// session's search_path would resolve: a function or aggregate call, an operator (spelled, or
// implied by IN, LIKE, BETWEEN, NULLIF, IS DISTINCT FROM, a simple CASE or a join's USING), a
// relation, and a type that is not one of the SQL keywords the grammar maps to pg_catalog. Each
// of them is a place where a role that can create objects in a schema of that path runs its code
// as whoever sends the statement (CVE-2018-1058). A name qualified with pg_catalog (an operator
// as OPERATOR(pg_catalog.=)) is not reported, and neither are the statement's own CTE names and
// aliases. `own_tables` are tables the statement may name on purpose (checked before use).
#pragma once

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sqllint {

struct Token {
    enum Kind { word, quoted, string, number, param, op, punct } kind;
    std::string text;  // words lowercased; quoted identifiers without their quotes
};

inline std::vector<Token> tokenize(std::string_view sql) {
    constexpr std::string_view op_chars = "+-*/<>=~!@#%^&|`?";
    std::vector<Token> out;
    std::size_t i = 0;
    const auto at = [&](std::size_t k) { return k < sql.size() ? sql[k] : '\0'; };
    const auto alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
    const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
    while (i < sql.size()) {
        const char c = sql[i];
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
        } else if (c == '-' && at(i + 1) == '-') {
            while (i < sql.size() && sql[i] != '\n') ++i;
        } else if (c == '/' && at(i + 1) == '*') {
            const auto end = sql.find("*/", i + 2);
            i = end == std::string_view::npos ? sql.size() : end + 2;
        } else if (c == '\'' || ((c == 'E' || c == 'e') && at(i + 1) == '\'')) {
            std::size_t k = i + (c == '\'' ? 1 : 2);
            std::string text;
            while (k < sql.size()) {
                if (sql[k] == '\'' && at(k + 1) == '\'') {
                    text += '\'';
                    k += 2;
                } else if (sql[k] == '\'') {
                    ++k;
                    break;
                } else {
                    text += sql[k++];
                }
            }
            out.push_back({Token::string, text});
            i = k;
        } else if (c == '"') {
            std::size_t k = i + 1;
            std::string text;
            while (k < sql.size()) {
                if (sql[k] == '"' && at(k + 1) == '"') {
                    text += '"';
                    k += 2;
                } else if (sql[k] == '"') {
                    ++k;
                    break;
                } else {
                    text += sql[k++];
                }
            }
            out.push_back({Token::quoted, text});
            i = k;
        } else if (alpha(c)) {
            std::size_t k = i;
            while (k < sql.size() && (alpha(sql[k]) || digit(sql[k]) || sql[k] == '$')) ++k;
            std::string text(sql.substr(i, k - i));
            std::transform(text.begin(), text.end(), text.begin(), [](unsigned char ch) { return std::tolower(ch); });
            out.push_back({Token::word, text});
            i = k;
        } else if (digit(c)) {
            std::size_t k = i;
            while (k < sql.size() && (alpha(sql[k]) || digit(sql[k]) || sql[k] == '.')) ++k;
            out.push_back({Token::number, std::string(sql.substr(i, k - i))});
            i = k;
        } else if (c == '$' && digit(at(i + 1))) {
            std::size_t k = i + 1;
            while (k < sql.size() && digit(sql[k])) ++k;
            out.push_back({Token::param, std::string(sql.substr(i, k - i))});
            i = k;
        } else if (c == ':' && at(i + 1) == ':') {
            out.push_back({Token::punct, "::"});
            i += 2;
        } else if (op_chars.find(c) != std::string_view::npos) {
            std::size_t k = i;
            while (k < sql.size() && op_chars.find(sql[k]) != std::string_view::npos) ++k;
            out.push_back({Token::op, std::string(sql.substr(i, k - i))});
            i = k;
        } else {
            out.push_back({Token::punct, std::string(1, c)});
            ++i;
        }
    }
    return out;
}

// Words the grammar itself turns into pg_catalog types (gram.y's SimpleTypename and friends).
inline bool keyword_type(const std::string& w) {
    static const std::set<std::string> k = {"int", "integer", "smallint", "bigint", "real", "float", "double",
                                            "decimal", "dec", "numeric", "boolean", "bit", "character", "char",
                                            "varchar", "national", "nchar", "timestamp", "time", "interval"};
    return k.contains(w);
}

// Words followed by "(" that are syntax, not a call resolved by name.
inline bool syntax_word(const std::string& w) {
    static const std::set<std::string> k = {
        "select", "from", "where", "and", "or", "not", "exists", "values", "as", "on", "when", "then", "else",
        "any", "all", "some", "array", "row", "cast", "coalesce", "greatest", "least", "extract", "filter", "over",
        "lateral", "join", "by", "distinct", "conflict", "key", "references", "unique", "check", "default",
        "materialized", "into", "table", "returning", "set", "with", "recursive", "union", "group", "order",
        "having", "case", "end", "in", "is", "nullif", "using", "limit", "offset", "only", "primary", "do",
        "update", "insert", "nothing", "left", "right", "inner", "full", "cross", "true", "false", "null"};
    return k.contains(w);
}

struct Finding {
    std::string what;   // "function array_agg", "operator =", "relation pg_locks", "type int8", ...
    std::string where;  // a few tokens around it
};

inline std::vector<Finding> unqualified_names(std::string_view sql, const std::set<std::string>& own_tables = {}) {
    const std::vector<Token> t = tokenize(sql);
    std::vector<Finding> out;
    const auto is = [&](std::size_t k, Token::Kind kind, std::string_view text = {}) {
        return k < t.size() && t[k].kind == kind && (text.empty() || t[k].text == text);
    };
    const auto word = [&](std::size_t k, std::string_view text = {}) { return is(k, Token::word, text); };
    const auto name = [&](std::size_t k) { return word(k) || is(k, Token::quoted); };
    const auto punct = [&](std::size_t k, std::string_view text) { return is(k, Token::punct, text); };
    const auto around = [&](std::size_t k) {
        std::string s;
        for (std::size_t j = k >= 4 ? k - 4 : 0; j < std::min(t.size(), k + 5); ++j) s += t[j].text + " ";
        return s;
    };
    const auto report = [&](std::size_t k, std::string what) { out.push_back({std::move(what), around(k)}); };
    // t[k] is a name preceded by "pg_catalog ."
    const auto qualified = [&](std::size_t k) {
        return k >= 2 && punct(k - 1, ".") && name(k - 2) && t[k - 2].text == "pg_catalog";
    };

    // Names the statement defines: CTEs ("name AS (", "name AS MATERIALIZED (", "name(cols) AS (")
    // and what AS names (a subquery, or a set-returning function's columns: "AS b(pid)").
    std::set<std::string> defined;
    for (std::size_t k = 0; k < t.size(); ++k) {
        if (!name(k)) continue;
        if (punct(k + 1, "(")) {
            int depth = 0;
            std::size_t j = k + 1;
            for (; j < t.size(); ++j) {
                if (punct(j, "(")) ++depth;
                if (punct(j, ")") && --depth == 0) break;
            }
            if (word(j + 1, "as") && (punct(j + 2, "(") || word(j + 2, "materialized"))) defined.insert(t[k].text);
        }
        if (word(k + 1, "as") && (punct(k + 2, "(") || word(k + 2, "materialized") || word(k + 2, "not")))
            defined.insert(t[k].text);
        if (k > 0 && word(k - 1, "as") && !keyword_type(t[k].text)) defined.insert(t[k].text);
    }

    // FROM and IN inside EXTRACT(f FROM x), SUBSTRING(x FROM n), TRIM(.. FROM x), POSITION(a IN b)
    // are the grammar's, not a relation or an operator.
    std::set<std::size_t> syntax_inside;
    for (std::size_t k = 0; k + 1 < t.size(); ++k) {
        if (!(word(k, "extract") || word(k, "substring") || word(k, "trim") || word(k, "position") ||
              word(k, "overlay")) ||
            !punct(k + 1, "("))
            continue;
        int depth = 0;
        for (std::size_t j = k + 1; j < t.size(); ++j) {
            if (punct(j, "(")) ++depth;
            if (punct(j, ")") && --depth == 0) break;
            if (depth == 1 && (word(j, "from") || word(j, "in") || word(j, "for") || word(j, "placing")))
                syntax_inside.insert(j);
        }
    }

    bool in_set_list = false;  // UPDATE ... SET a = b, ...: "=" is an assignment there
    for (std::size_t k = 0; k < t.size(); ++k) {
        const Token& tok = t[k];
        if (word(k, "set") && !(k > 0 && punct(k - 1, "."))) in_set_list = true;
        if (word(k, "where") || word(k, "returning") || word(k, "from") || word(k, "select")) in_set_list = false;

        if (word(k, "operator") && punct(k + 1, "(")) {
            if (!(word(k + 2, "pg_catalog") && punct(k + 3, ".") && is(k + 4, Token::op) && punct(k + 5, ")")))
                report(k, "operator in OPERATOR() without pg_catalog");
            k += 5;  // past the closing parenthesis
            continue;
        }
        if (tok.kind == Token::op) {
            const bool star = tok.text == "*" && (k == 0 || punct(k - 1, "(") || punct(k - 1, ",") ||
                                                  punct(k - 1, ".") || word(k - 1, "select"));
            const bool negative_literal =
                tok.text == "-" && is(k + 1, Token::number) &&
                (k == 0 || t[k - 1].kind == Token::op || punct(k - 1, "(") || punct(k - 1, ",") ||
                 (t[k - 1].kind == Token::word && syntax_word(t[k - 1].text)));
            const bool assignment = tok.text == "=" && in_set_list;
            if (!star && !negative_literal && !assignment) report(k, "operator " + tok.text);
            continue;
        }
        if (!name(k) || syntax_inside.contains(k)) continue;
        const std::string& w = tok.text;
        const bool keyword = tok.kind == Token::word && syntax_word(w);
        if (tok.kind == Token::word) {
            if ((w == "in" && punct(k + 1, "(")) || w == "between" || w == "like" || w == "ilike" || w == "similar" ||
                (w == "nullif" && punct(k + 1, "(")) || (w == "distinct" && k > 0 && word(k - 1, "is")) ||
                (w == "using" && punct(k + 1, "(")) || w == "natural") {
                report(k, "operator implied by " + w);
                continue;
            }
            if (w == "case" && !word(k + 1, "when")) {
                report(k, "operator implied by a simple CASE");
                continue;
            }
        }
        if (punct(k + 1, "(") && !keyword && !defined.contains(w)) {
            const bool creates = k > 0 && (word(k - 1, "into") || word(k - 1, "table") || word(k - 1, "exists"));
            if (creates || qualified(k)) continue;
            report(k, k > 1 && punct(k - 1, ".") ? "function " + t[k - 2].text + "." + w : "function " + w);
            continue;
        }
        if (k > 0 && punct(k - 1, "::")) {
            if (!(tok.kind == Token::word && keyword_type(w)) && !(w == "pg_catalog" && punct(k + 1, ".")))
                report(k, "type " + w);
            continue;
        }
        const bool after_relation_word = k > 0 && !syntax_inside.contains(k - 1) && (word(k - 1, "from") || word(k - 1, "join") || word(k - 1, "only") ||
                                                   word(k - 1, "update") || word(k - 1, "into"));
        if (!after_relation_word || keyword || defined.contains(w)) continue;
        if (punct(k + 1, ".")) {
            // schema.relation: pg_catalog is the one schema only the bootstrap superuser owns
            const std::string rel = k + 2 < t.size() ? t[k + 2].text : "";
            if (w != "pg_catalog" && !own_tables.contains(rel)) report(k, "relation " + w + "." + rel);
        } else if (!own_tables.contains(w)) {
            report(k, "relation " + w);
        }
    }
    return out;
}

}  // namespace sqllint
