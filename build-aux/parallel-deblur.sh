#!/bin/bash
# parallel-deblur.sh: deblur a list of files on one workstation with GNU
# parallel, one job per GPU (each job's deblur runs on its own device).
#
#   build-aux/parallel-deblur.sh LIST OUTDIR [deblur options...]
#
# LIST names one input per line. Jobs: $SHARPSKY_JOBS, else the number of
# GPUs nvidia-smi lists, else 1 (the CPU backend uses every core itself).
# Each job takes $SHARPSKY_PER_JOB files (default 8) and runs
#   sharpsky-cli deblur FILES... --output-dir OUTDIR --devices SLOT-1 [options...]
# A failed file is named on one line on stderr and the others go on; the
# exit status is 0 when every file was deblurred, 1 otherwise. The CLI is
# $SHARPSKY_CLI, or sharpsky-cli on PATH.
set -u

cli=${SHARPSKY_CLI:-sharpsky-cli}

# One job of GNU parallel: --job SLOT runs deblur on device SLOT - 1.
if [ "${1:-}" = "--job" ]; then
  slot=$2
  shift 2
  exec "$cli" deblur --devices $(( slot - 1 )) "$@"
fi

if [ $# -lt 2 ]; then
  echo "usage: $0 LIST OUTDIR [deblur options...]" >&2
  exit 2
fi
list=$1
outdir=$2
shift 2
if ! command -v parallel > /dev/null; then
  echo "parallel-deblur: GNU parallel is not installed (apt-get install parallel)" >&2
  exit 2
fi
jobs=${SHARPSKY_JOBS:-}
if [ -z "$jobs" ]; then
  jobs=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
  [ "$jobs" -gt 0 ] 2> /dev/null || jobs=1
fi

# -q keeps every option one word; {%} is the job slot (1..jobs), which is
# never shared by two running jobs, so no two jobs use one GPU at once.
grep -v '^$' "$list" | parallel --will-cite -q --halt never -j "$jobs" -N "${SHARPSKY_PER_JOB:-8}" \
  "$0" --job '{%}' --output-dir "$outdir" "$@" {}
[ $? -eq 0 ]
