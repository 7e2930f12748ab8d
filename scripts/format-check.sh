#!/usr/bin/env bash
# Checks that the C sources are formatted as .clang-format says, or formats them.
#
#   scripts/format-check.sh            list the misformatted files with a diff of each; exit 1 if any
#   scripts/format-check.sh --fix      format them in place
#   scripts/format-check.sh [--fix] FILE...   the same, for these files only
#
# The files: every *.c and *.h that git knows or would add (tracked, or untracked and not
# ignored), or every one under the source folders when this is not a git checkout, less
# the exclusions below. The style is pinned to clang-format 14 (Debian 12's, what CI
# installs): another major version formats some constructs differently, so it is not used.
#
# Exit status: 0 formatted (or fixed), 1 misformatted files, 2 usage error, 77 skipped
# (no clang-format 14: CTest's skip code), unless TPEVENT_REQUIRE_FORMAT_CHECK=1 (set by
# .ci/run), which makes that a failure.
# Environment: CLANG_FORMAT (the program; default clang-format-14, else clang-format),
# DIFF_FILES (how many files' diffs are shown, default 10), DIFF_LINES (lines of each, default 40).
set -euo pipefail
cd "$(dirname "$0")/.."

required_major=14
diff_files=${DIFF_FILES:-10}
diff_lines=${DIFF_LINES:-40}

# Files clang-format must leave alone, as shell patterns on the path from the top.
#   runtime_*.h: each runtime's mapping header is a table of one-line wrappers, one per
#   runtime call, kept one a line so that the three runtimes read side by side.
excluded=(
  '*/runtime_cuda.h'
  '*/runtime_hip.h'
  '*/runtime_fake.h'
)

fix=0
files=()
for arg in "$@"; do
  case $arg in
    --fix) fix=1 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "format-check.sh: unknown option '$arg' (--fix, --help)" >&2; exit 2 ;;
    *) files+=("$arg") ;;
  esac
done

skip() {
  if [ "${TPEVENT_REQUIRE_FORMAT_CHECK:-0}" = 1 ]; then
    echo "format-check.sh: FAIL: $* (TPEVENT_REQUIRE_FORMAT_CHECK=1: this check must run here)" >&2
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}

clang_format=${CLANG_FORMAT:-}
if [ -z "$clang_format" ]; then
  clang_format=$(command -v clang-format-$required_major || command -v clang-format || true)
fi
[ -n "$clang_format" ] || skip "no clang-format (Debian: apt-get install clang-format)"
version=$("$clang_format" --version 2>/dev/null || true)
major=$(printf '%s\n' "$version" | sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p' | head -n 1)
[ "$major" = "$required_major" ] ||
  skip "$clang_format is '${version:-not runnable}'; the house style is pinned to clang-format $required_major"

if [ ${#files[@]} -eq 0 ]; then
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.c' '*.h' | sort -u)
  else
    mapfile -t files < <(find core common backends include python/src tools bench tests examples \
                              -name '*.[ch]' -type f 2>/dev/null | sort)
  fi
fi

checked=()
for file in "${files[@]}"; do
  [ -f "$file" ] || continue # listed by git but deleted in the working tree
  keep=1
  for pattern in "${excluded[@]}"; do
    # shellcheck disable=SC2053 # a pattern on purpose
    [[ $file == $pattern ]] && keep=0
  done
  [ "$keep" = 1 ] && checked+=("$file")
done
[ ${#checked[@]} -gt 0 ] || { echo "format-check.sh: no C files to check" >&2; exit 2; }

# One clang-format run names the misformatted files (a warning per place), so that only
# those are formatted again for their diffs. It fails on a .clang-format it cannot read.
if ! report=$("$clang_format" --style=file --dry-run "${checked[@]}" 2>&1); then
  printf '%s\n' "$report" | grep -v 'code should be clang-formatted' | head -n 8 >&2 || true
  echo "format-check.sh: $clang_format failed (above)" >&2
  exit 1
fi
mapfile -t misformatted < <(
  printf '%s\n' "$report" |
    sed -n 's/^\(.*\):[0-9]*:[0-9]*: \(warning\|error\): code should be clang-formatted.*/\1/p' | sort -u
)

if [ ${#misformatted[@]} -eq 0 ]; then
  echo "format-check.sh: ${#checked[@]} files formatted as .clang-format says ($("$clang_format" --version))"
  exit 0
fi

if [ "$fix" = 1 ]; then
  "$clang_format" --style=file -i "${misformatted[@]}"
  printf 'format-check.sh: formatted %d of %d files:\n' "${#misformatted[@]}" "${#checked[@]}"
  printf '  %s\n' "${misformatted[@]}"
  exit 0
fi

for file in "${misformatted[@]:0:$diff_files}"; do
  echo "=== $file"
  "$clang_format" --style=file "$file" | diff -u --label "$file" --label "$file (formatted)" "$file" - |
    head -n "$diff_lines" || true
done
printf '\nformat-check.sh: %d of %d files are not formatted as .clang-format says:\n' \
  "${#misformatted[@]}" "${#checked[@]}"
printf '  %s\n' "${misformatted[@]}"
echo "Run scripts/format-check.sh --fix to format them (clang-format $required_major)."
exit 1
