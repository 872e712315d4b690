# shellcheck shell=bash
# Shared by the bench scripts (source it): the statistics they print, one definition each.

# median LIST: the median of the space-separated numbers in LIST; "-" entries (a measure a run
# could not take) are left out, and "-" comes back when nothing is left.
median() {
  tr ' ' '\n' <<<"$1" | { grep -v '^-*$' || true; } | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B to two places, "-" when B is not positive.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# loadavg: the machine's 1, 5 and 15 minute load averages.
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
