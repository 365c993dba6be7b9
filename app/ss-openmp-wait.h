/* ss-openmp-wait.h: how OpenMP's idle threads wait, settled before the
 * program starts (both executables call it first thing in main). */
#pragma once

/* The spin count Sharpsky runs with when the user has set neither
 * OMP_WAIT_POLICY nor GOMP_SPINCOUNT (README, "Where the time goes"). */
#define SS_OPENMP_SPIN_COUNT "500"

/* libgomp reads its wait policy once, when it is loaded, before main runs:
 * setting it from main needs the program to start again. So when neither
 * variable is set, this sets GOMP_SPINCOUNT and re-executes the program
 * (/proc/self/exe, ARGV unchanged); the new process finds it set and
 * returns at once. Should the exec fail, the program goes on with
 * libgomp's default. */
void ss_openmp_settle_wait (char **argv);
