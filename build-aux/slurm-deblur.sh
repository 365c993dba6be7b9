#!/bin/bash
# slurm-deblur.sh: deblur a list of files across machines as a Slurm job array.
#
#   sbatch --array=0-(T-1) build-aux/slurm-deblur.sh LIST OUTDIR [deblur options...]
#
# LIST names one input file per line (blank lines are skipped). Array task k
# of T takes the lines k, k+T, k+2T, ... (so the shares differ by at most one
# file whatever the order of sizes) and runs
#
#   sharpsky-cli deblur FILES... --output-dir OUTDIR [deblur options...]
#
# Each file succeeds or fails on its own; a failed file is named on one line
# in the task's log (sbatch --output) and makes the task exit 1, so the job
# array's state shows it. Nothing is retried: --no-requeue below, and a
# broken input fails the same way every time; after fixing inputs, submit
# the failed ones again in a new list. With --gres=gpu:1 each task sees its
# GPU as device 0, the CLI's default. The CLI is $SHARPSKY_CLI, or
# sharpsky-cli on PATH.
#
#SBATCH --job-name=sharpsky-deblur
#SBATCH --no-requeue
#SBATCH --cpus-per-task=1
set -u

if [ $# -lt 2 ]; then
  echo "usage: sbatch --array=0-N $0 LIST OUTDIR [deblur options...]" >&2
  exit 2
fi
list=$1
outdir=$2
shift 2
cli=${SHARPSKY_CLI:-sharpsky-cli}

# Outside Slurm (a trial run): one task holding every file.
task=$(( ${SLURM_ARRAY_TASK_ID:-0} - ${SLURM_ARRAY_TASK_MIN:-0} ))
tasks=${SLURM_ARRAY_TASK_COUNT:-1}

if [ ! -r "$list" ]; then
  echo "slurm-deblur: cannot read the file list $list" >&2
  exit 2
fi

files=()
line_number=0
while IFS= read -r file || [ -n "$file" ]; do
  [ -z "$file" ] && continue
  if [ $(( line_number % tasks )) -eq "$task" ]; then
    files+=("$file")
  fi
  line_number=$(( line_number + 1 ))
done < "$list"

echo "slurm-deblur: task $task of $tasks on $(hostname): ${#files[@]} of $line_number files"
if [ ${#files[@]} -eq 0 ]; then
  exit 0
fi
"$cli" deblur "${files[@]}" --output-dir "$outdir" "$@"
status=$?
echo "slurm-deblur: task $task of $tasks exits $status"
exit $status
